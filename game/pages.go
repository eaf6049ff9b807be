package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The read side: what the pages show. None of these writes, and none runs in
// a transaction (each is one statement, consistent on its own). All but
// Player and SessionPlayer are served from the read cache while no write
// changes what they read (cache.go): the slices they return are shared, and
// no caller may modify them.

const playerColumns = `p.id, p.name, p.faction, p.cash, p.agents, p.security, p.secrets, p.ap,
	p.protected_until, p.created_at, p.acted, p.unread_messages, p.unread_faction,
	p.rounds_played, p.rounds_won, p.best_place, p.gold, p.silver, p.bronze, p.bid, p.bid_tick, p.trap, p.sweep_until, p.lie_low_until,
	p.last_lot`

const eventColumns = `id, tick, at, coalesce(player_id, 0), public, text`

type scanner interface{ Scan(dest ...any) error }

// scanPlayer scans pre, then playerColumns.
func scanPlayer(row scanner, pre ...any) (*Player, error) {
	var p Player
	var created int64
	err := row.Scan(append(pre, &p.ID, &p.Name, &p.Faction, &p.Cash, &p.Agents, &p.Security, &p.Secrets, &p.AP,
		&p.ProtectedUntil, &created, &p.Acted, &p.UnreadMessages, &p.UnreadFaction,
		&p.Career.Rounds, &p.Career.Wins, &p.Career.BestPlace, &p.Career.Gold, &p.Career.Silver, &p.Career.Bronze,
		&p.Bid, &p.BidTick, &p.Trap, &p.SweepUntil, &p.LieLowUntil, &p.LastLot)...)
	if err != nil {
		return nil, err
	}
	p.CreatedAt = fromNano(created)
	return &p, nil
}

// inTx returns st bound to tx, or st itself for a nil tx.
func inTx(ctx context.Context, tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	if tx == nil {
		return st
	}
	return tx.StmtContext(ctx, st)
}

// findPlayer returns player id, through playerStmt bound to tx (nil: no transaction).
func findPlayer(ctx context.Context, tx *sql.Tx, playerStmt *sql.Stmt, id int64) (*Player, error) {
	p, err := scanPlayer(inTx(ctx, tx, playerStmt).QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "There is no player #%d.", id)
	}
	return p, err
}

// Player returns the player with this id. Errors: ENOTFOUND.
func (s *Store) Player(ctx context.Context, id int64) (*Player, error) {
	p, err := findPlayer(ctx, nil, s.playerStmt, id)
	return p, wrap("player", err)
}

// Clock returns the game clock, with RoundTicks and Interval from Options.
func (s *Store) Clock(ctx context.Context) (Clock, error) {
	return cached(ctx, s, cacheKey{kind: "clock"}, clockTags, s.readClock)
}

// Tags of the cached reads that depend on one thing alone.
var (
	clockTags   = []tag{{kind: tagClock}}
	newsTags    = []tag{{kind: tagNews}}
	sourcesTags = []tag{{kind: tagSources}}
	rosterTags  = []tag{{kind: tagRoster}}
	// The ranking shows every player's place (their Secrets), name,
	// faction and protection, and the factions' totals.
	rankingTags = []tag{{kind: tagRoster}, {kind: tagSecrets}, {kind: tagProtection}}
)

func (s *Store) readClock(ctx context.Context) (Clock, error) {
	c, err := readClock(ctx, nil, s.clockStmt)
	if err != nil {
		return Clock{}, wrap("clock", err)
	}
	c.RoundTicks, c.Interval = s.opt.RoundTicks, s.opt.TickInterval
	return c, nil
}

// Events returns the latest limit lines of the player's feed, newest first
// (nil for limit < 1). The feed keeps the last KeepFeed lines.
func (s *Store) Events(ctx context.Context, playerID int64, limit int) ([]Event, error) {
	if limit < 1 {
		return nil, nil
	}
	return cached(ctx, s, cacheKey{kind: "events", id: playerID, n: limit}, []tag{{tagFeed, playerID}}, func(ctx context.Context) ([]Event, error) {
		rows, err := s.eventsStmt.QueryContext(ctx, playerID, limit)
		return scanEvents(rows, err)
	})
}

// News returns the latest limit public events, newest first (nil for
// limit < 1). The news keeps the last KeepNews lines.
func (s *Store) News(ctx context.Context, limit int) ([]Event, error) {
	return s.news(ctx, 0, limit)
}

// NewsPage returns page number (from 1, clamped to the pages there are) of
// the news, newest first.
func (s *Store) NewsPage(ctx context.Context, number int) (Page[Event], error) {
	return listPage(ctx, s, cacheKey{kind: "news-page", n: number}, newsTags, func(ctx context.Context) (int, error) {
		return s.count(ctx, "news", newsTags, `SELECT count(*) FROM events WHERE public = 1`)
	}, s.news)
}

// listPage reads page key.n (clamped) of a list of count rows, the page's
// rows by rows, cached under key with tags.
func listPage[T any](ctx context.Context, s *Store, key cacheKey, tags []tag, count func(context.Context) (int, error),
	rows func(ctx context.Context, offset, limit int) ([]T, error)) (Page[T], error) {
	return cached(ctx, s, key, tags, func(ctx context.Context) (Page[T], error) {
		return readPage(ctx, key.n, count, rows)
	})
}

// readPage reads page number (clamped) of a list of count rows, the
// page's rows by rows.
func readPage[T any](ctx context.Context, number int, count func(context.Context) (int, error),
	rows func(ctx context.Context, offset, limit int) ([]T, error)) (Page[T], error) {
	total, err := count(ctx)
	if err != nil {
		return Page[T]{}, err
	}
	p := Page[T]{Number: pageNumber(number, total), Total: total}
	p.Rows, err = rows(ctx, p.Offset(), PageSize)
	return p, err
}

func (s *Store) news(ctx context.Context, offset, limit int) ([]Event, error) {
	if limit < 1 {
		return nil, nil
	}
	return cached(ctx, s, cacheKey{kind: "news", id: int64(offset), n: limit}, newsTags, func(ctx context.Context) ([]Event, error) {
		rows, err := s.prepared(ctx, nil, `SELECT `+eventColumns+` FROM events WHERE public = 1
			ORDER BY id DESC LIMIT ? OFFSET ?`).QueryContext(ctx, limit, offset)
		return scanEvents(rows, err)
	})
}

// count returns the single number query selects, cached under name with
// tags.
func (s *Store) count(ctx context.Context, name string, tags []tag, query string, args ...any) (int, error) {
	return cached(ctx, s, cacheKey{kind: "count", name: name}, tags, func(ctx context.Context) (int, error) {
		var n int
		err := s.prepared(ctx, nil, query).QueryRowContext(ctx, args...).Scan(&n)
		return n, wrap("count "+name, err)
	})
}

func scanEvents(rows *sql.Rows, err error) ([]Event, error) {
	events, err := collect(rows, err, scanEvent)
	return events, wrap("events", err)
}

// scanEvent scans eventColumns.
func scanEvent(row scanner) (*Event, error) {
	var e Event
	var at int64
	if err := row.Scan(&e.ID, &e.Tick, &at, &e.PlayerID, &e.Public, &e.Text); err != nil {
		return nil, err
	}
	e.At = fromNano(at)
	return &e, nil
}

// Sources returns every source, by id.
func (s *Store) Sources(ctx context.Context) ([]Source, error) {
	return cached(ctx, s, cacheKey{kind: "sources"}, sourcesTags, func(ctx context.Context) ([]Source, error) {
		rows, err := s.prepared(ctx, nil, sourcesQuery).QueryContext(ctx)
		sources, err := collect(rows, err, scanSource)
		return sources, wrap("sources", err)
	})
}

// LastAuction returns the news line of the broker's latest auction still
// in the news (AuctionNews), or the zero Event when there is none. From
// the read cache until the next write.
func (s *Store) LastAuction(ctx context.Context) (Event, error) {
	return cached(ctx, s, cacheKey{kind: "last-auction"}, []tag{{kind: tagNews}}, func(ctx context.Context) (Event, error) {
		rows, err := s.prepared(ctx, nil, `SELECT `+eventColumns+` FROM events WHERE public = 1 AND text LIKE ?
			ORDER BY id DESC LIMIT 1`).QueryContext(ctx, AuctionNews+"%")
		evs, err := scanEvents(rows, err)
		if len(evs) == 0 {
			return Event{}, wrap("last auction", err)
		}
		return evs[0], wrap("last auction", err)
	})
}

// Dossiers returns what the player's faction knows about every other player,
// by name (case-insensitive): Target's ID, Name, Faction, Secrets and
// ProtectedUntil (as everyone may see them, on the ranking) always, the rest
// as of the latest successful spy by the player or a teammate in this round
// (Known false: none; By names who gathered it). Intel is shared within a
// faction: a teammate's dossier counts as the player's own.
func (s *Store) Dossiers(ctx context.Context, playerID int64) ([]Dossier, error) {
	return s.dossiers(ctx, playerID, 0, -1)
}

// Players returns how many players the game has, the table's size a
// theft's odds depend on (OddsOf: DuoTable), from the read cache.
func (s *Store) Players(ctx context.Context) (int, error) {
	return s.count(ctx, "players", rosterTags, `SELECT count(*) FROM players`)
}

// DossiersPage returns page number (from 1, clamped to the pages there are)
// of the player's dossiers, in the order of Dossiers. It reads only the
// page's rows, through the index on the names.
//
// The rows come from a window of the dossiers of every player (the
// viewer's own row too) as the viewer's faction knows them, read once for
// all the faction's players and kept in the read cache until one of its
// players acts, or is spied on by the faction (a window per faction and
// page): under make capacity every order emptied each player's own page
// of 50 rows, and the query was a tenth of the server's CPU. The viewer's
// page is the window without the viewer.
func (s *Store) DossiersPage(ctx context.Context, playerID int64, number int) (Page[Dossier], error) {
	v, err := s.dossierViewer(ctx, playerID)
	if err != nil {
		return Page[Dossier]{}, err
	}
	players, err := s.Players(ctx)
	if err != nil {
		return Page[Dossier]{}, err
	}
	total := max(players-1, 0)
	p := Page[Dossier]{Number: pageNumber(number, total), Total: total}
	win, err := s.dossierWindow(ctx, v.Faction, p.Offset())
	if err != nil {
		return Page[Dossier]{}, err
	}
	// The page is the window's rows from the viewer's position on, without
	// the viewer: one row later if the viewer comes before the window.
	start := 0
	if v.ID != 0 && len(win.rows) > 0 && nocaseLess(v.Name, win.rows[0].Target.Name) {
		start = 1
	}
	start = min(start, len(win.rows))
	end := min(start+PageSize, len(win.rows))
	own := false // the page is not a part of the window: the viewer is in it, or a tied look
	for i := start; i < end; i++ {
		own = own || win.rows[i].Target.ID == v.ID || win.tied[i]
	}
	if !own {
		p.Rows = win.rows[start:end]
		return p, nil
	}
	key := cacheKey{kind: "dossiers-own", id: playerID, n: p.Offset()}
	p.Rows, err = cachedBy(ctx, s, key, "", func(ctx context.Context, _ string) ([]Dossier, []tag, error) {
		var rows []Dossier
		for i := start; i < len(win.rows) && len(rows) < PageSize; i++ {
			d := win.rows[i]
			if d.Target.ID == v.ID {
				continue
			}
			if win.tied[i] {
				// Teammates looked at the target at the same instant: the
				// viewer's own look is the one shown, if it is one of them.
				var err error
				if d, err = s.viewerDossier(ctx, v, d); err != nil {
					return nil, nil, err
				}
			}
			rows = append(rows, d)
		}
		return rows, win.tags, nil
	})
	return p, err
}

// dossierViewer returns the ID, Name and Faction of player id, whose
// dossiers are read, or the zero Player if there is none (whose page then
// shows every player, with no intel).
func (s *Store) dossierViewer(ctx context.Context, id int64) (Player, error) {
	return cached(ctx, s, cacheKey{kind: "dossier-viewer", id: id}, rosterTags, func(ctx context.Context) (Player, error) {
		p := Player{ID: id}
		err := s.prepared(ctx, nil, `SELECT name, faction FROM players WHERE id = ?`).QueryRowContext(ctx, id).Scan(&p.Name, &p.Faction)
		if errors.Is(err, sql.ErrNoRows) {
			return Player{}, nil
		}
		return p, wrap("dossiers", err)
	})
}

// dossierWin is a window of dossiers (dossierWindow): its rows, whether
// more than one player of the faction looked at each row's target at the
// instant of the look it shows (tied), and the tags it was read under.
type dossierWin struct {
	rows []Dossier
	tied []bool
	tags []tag
}

// dossierWindow reads PageSize+1 dossiers from offset of every player by
// name, as faction f knows them, from the read cache when it can: enough
// for a page of any of the faction's players, whose page leaves the
// player's own row out. Its tags are, for each player it shows, their
// standing (tagStanding: their Secrets and protection) and the faction's
// intel on them (tagIntelOn), and the roster.
func (s *Store) dossierWindow(ctx context.Context, f Faction, offset int) (dossierWin, error) {
	key := cacheKey{kind: "dossiers-window", id: factionTag(f), n: offset}
	return cachedBy(ctx, s, key, "", func(ctx context.Context, _ string) (dossierWin, []tag, error) {
		rows, err := s.prepared(ctx, nil, `SELECT p.id, p.name, p.faction, p.protected_until, i.tick IS NOT NULL,
			coalesce(i.cash, 0), coalesce(i.agents, 0), coalesce(i.security, 0), p.secrets,
			coalesce(i.ap, 0), coalesce(i.bid, 0), coalesce(i.trap, 0), coalesce(i.sweep_until, 0),
			coalesce(i.tick, 0), coalesce(i.at, 0), coalesce(g.name, ''),
			i.tick IS NOT NULL AND (SELECT count(*) FROM intel k CROSS JOIN players r ON r.id = k.player_id
				WHERE k.target_id = p.id AND k.tick = i.tick AND k.at = i.at AND r.faction = ?1) > 1
			FROM players p
			LEFT JOIN intel i ON i.target_id = p.id AND i.player_id = (
				SELECT j.player_id FROM intel j CROSS JOIN players q ON q.id = j.player_id
				WHERE j.target_id = p.id AND q.faction = ?1
				ORDER BY j.tick DESC, j.at DESC LIMIT 1)
			LEFT JOIN players g ON g.id = i.player_id
			ORDER BY p.name COLLATE NOCASE LIMIT ?2 OFFSET ?3`).QueryContext(ctx, string(f), PageSize+1, offset)
		var w dossierWin
		_, err = collect(rows, err, func(row scanner) (*Dossier, error) {
			var d Dossier
			var at int64
			var tied bool
			t := &d.Target
			if err := row.Scan(&t.ID, &t.Name, &t.Faction, &t.ProtectedUntil, &d.Known, &t.Cash, &t.Agents, &t.Security,
				&t.Secrets, &t.AP, &t.Bid, &t.Trap, &t.SweepUntil, &d.Tick, &at, &d.By, &tied); err != nil {
				return nil, err
			}
			if d.Known {
				d.At = fromNano(at)
			}
			w.rows, w.tied = append(w.rows, d), append(w.tied, tied)
			return &d, nil
		})
		if err != nil {
			return dossierWin{}, nil, wrap("dossiers", err)
		}
		w.tags = make([]tag, 0, 2*len(w.rows)+1)
		w.tags = append(w.tags, tag{kind: tagRoster})
		for _, d := range w.rows {
			w.tags = append(w.tags, tag{tagStanding, d.Target.ID}, intelOnTag(f, d.Target.ID))
		}
		return w, w.tags, nil
	})
}

// viewerDossier is d, a row of a dossiers window whose look is tied, as
// viewer v's page shows it: of the faction's looks at that instant, the
// viewer's own if it is one of them.
func (s *Store) viewerDossier(ctx context.Context, v Player, d Dossier) (Dossier, error) {
	var at int64
	t := &d.Target
	err := s.prepared(ctx, nil, `SELECT i.cash, i.agents, i.security, i.ap, i.bid, i.trap, i.sweep_until,
		i.tick, i.at, g.name FROM intel i JOIN players g ON g.id = i.player_id
		WHERE i.target_id = ?2 AND i.player_id = (
			SELECT j.player_id FROM intel j CROSS JOIN players q ON q.id = j.player_id
			WHERE j.target_id = ?2 AND q.faction = ?3
			ORDER BY j.tick DESC, j.at DESC, j.player_id = ?1 DESC LIMIT 1)`).QueryRowContext(ctx, v.ID, t.ID, string(v.Faction)).
		Scan(&t.Cash, &t.Agents, &t.Security, &t.AP, &t.Bid, &t.Trap, &t.SweepUntil, &d.Tick, &at, &d.By)
	if err != nil {
		return d, wrap("dossiers", err)
	}
	d.At = fromNano(at)
	return d, nil
}

// nocaseLess reports whether a sorts before b in SQLite's NOCASE
// collation: byte by byte, ASCII letters folded to lower case.
func nocaseLess(a, b string) bool {
	fold := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := fold(a[i]), fold(b[i]); x != y {
			return x < y
		}
	}
	return len(a) < len(b)
}

// dossiers reads limit dossiers (-1: all) from offset. The players' names
// are unique regardless of case, so the name index alone orders them. For
// each row, the faction's latest intel on that target: CROSS JOIN keeps
// SQLite reading the target's intel rows first, newest first
// (intel_target_latest), and looking each spy up until the first of the
// faction, rather than probing intel for every player of the faction
// (players_faction), which cost 8 ms a page at 1,500 players. Reading
// and sorting every look at the target instead made a row cost as many
// lookups as players had looked (BenchmarkDossiersPage: 20 ms a page at
// 300 looks of each side a target).
func (s *Store) dossiers(ctx context.Context, playerID int64, offset, limit int) ([]Dossier, error) {
	rows, err := s.prepared(ctx, nil, `SELECT p.id, p.name, p.faction, p.protected_until, i.tick IS NOT NULL,
		coalesce(i.cash, 0), coalesce(i.agents, 0), coalesce(i.security, 0), p.secrets,
		coalesce(i.ap, 0), coalesce(i.bid, 0), coalesce(i.trap, 0), coalesce(i.sweep_until, 0),
		coalesce(i.tick, 0), coalesce(i.at, 0), coalesce(g.name, '')
		FROM players p
		LEFT JOIN intel i ON i.target_id = p.id AND i.player_id = (
			SELECT j.player_id FROM intel j CROSS JOIN players q ON q.id = j.player_id
			WHERE j.target_id = p.id AND q.faction = (SELECT faction FROM players WHERE id = ?)
			ORDER BY j.tick DESC, j.at DESC, j.player_id = ? DESC LIMIT 1)
		LEFT JOIN players g ON g.id = i.player_id
		WHERE p.id != ? ORDER BY p.name COLLATE NOCASE LIMIT ? OFFSET ?`).QueryContext(ctx, playerID, playerID, playerID, limit, offset)
	ds, err := collect(rows, err, scanDossier)
	return ds, wrap("dossiers", err)
}

// scanDossier scans the columns Dossiers selects.
func scanDossier(row scanner) (*Dossier, error) {
	var d Dossier
	var at int64
	t := &d.Target
	if err := row.Scan(&t.ID, &t.Name, &t.Faction, &t.ProtectedUntil, &d.Known, &t.Cash, &t.Agents, &t.Security, &t.Secrets,
		&t.AP, &t.Bid, &t.Trap, &t.SweepUntil, &d.Tick, &at, &d.By); err != nil {
		return nil, err
	}
	if d.Known {
		d.At = fromNano(at)
	}
	return &d, nil
}

// Ranking returns the scoreboard of the current round: every player by
// Secrets, then name (see Rank), and the FBI and MIB totals.
func (s *Store) Ranking(ctx context.Context) (*Ranking, error) {
	tags := []tag{{kind: tagRoster}, {kind: tagAnyPlayer}} // every figure of every player
	return cached(ctx, s, cacheKey{kind: "ranking"}, tags, func(ctx context.Context) (*Ranking, error) {
		players, err := findPlayers(ctx, s.db)
		if err != nil {
			return nil, wrap("ranking", err)
		}
		return Rank(players), nil
	})
}

// RankingPage returns page number (from 1, clamped to the pages there are)
// of the scoreboard, in the order of Rank, and the faction totals. Each row
// holds what the ranking shows of a player, its standing: ID, Name,
// Faction, Secrets and ProtectedUntil; the other fields are zero, so that
// the page stays cached while only other figures change (cash, AP). It
// reads the page's rows through the ranking index and sums the factions in
// one pass over the players.
func (s *Store) RankingPage(ctx context.Context, number int) (Page[Player], []FactionTotal, error) {
	type result struct {
		page   Page[Player]
		totals []FactionTotal
	}
	r, err := cached(ctx, s, cacheKey{kind: "ranking-page", n: number}, rankingTags, func(ctx context.Context) (result, error) {
		totals, err := s.factionTotals(ctx)
		if err != nil {
			return result{}, err
		}
		var n int
		for _, t := range totals {
			n += t.Players
		}
		p := Page[Player]{Number: pageNumber(number, n), Total: n}
		rows, err := s.prepared(ctx, nil, `SELECT p.id, p.name, p.faction, p.secrets, p.protected_until FROM players p
			ORDER BY p.secrets DESC, p.name COLLATE NOCASE LIMIT ? OFFSET ?`).QueryContext(ctx, PageSize, p.Offset())
		p.Rows, err = collect(rows, err, func(row scanner) (*Player, error) {
			var q Player
			return &q, row.Scan(&q.ID, &q.Name, &q.Faction, &q.Secrets, &q.ProtectedUntil)
		})
		return result{p, totals}, wrap("ranking", err)
	})
	return r.page, r.totals, err
}

// Place returns the place in the current round's ranking of a player
// holding secrets Secrets: 1 + how many players hold more, the place
// players level on Secrets share (SharedPlaces). A page of the ranking
// places its first row so.
func (s *Store) Place(ctx context.Context, secrets int) (int, error) {
	return s.count(ctx, fmt.Sprint("place:", secrets), []tag{{kind: tagRoster}, {kind: tagSecrets}}, `SELECT count(*) + 1 FROM players WHERE secrets > ?`, secrets)
}

// factionTotals sums each faction's players: FBI, then MIB, as Rank does.
func (s *Store) factionTotals(ctx context.Context) ([]FactionTotal, error) {
	totals := []FactionTotal{{Faction: FBI}, {Faction: MIB}}
	rows, err := s.prepared(ctx, nil, `SELECT faction, count(*), sum(secrets) FROM players GROUP BY faction`).QueryContext(ctx)
	sums, err := collect(rows, err, func(row scanner) (*FactionTotal, error) {
		var t FactionTotal
		return &t, row.Scan(&t.Faction, &t.Players, &t.Secrets)
	})
	for _, t := range sums {
		for i := range totals {
			if totals[i].Faction == t.Faction {
				totals[i] = t
			}
		}
	}
	return totals, wrap("faction totals", err)
}

// Posts returns the latest limit board posts the faction reader may read,
// newest first (nil for limit < 1): every public post and reader's
// faction-only ones ("" for public posts only).
func (s *Store) Posts(ctx context.Context, reader Faction, limit int) ([]Post, error) {
	return s.posts(ctx, reader, 0, limit)
}

// PostsPage returns page number (from 1, clamped to the pages there are)
// of the board as the faction reader reads it (see Posts), newest first.
func (s *Store) PostsPage(ctx context.Context, reader Faction, number int) (Page[Post], error) {
	tags := boardTags(reader)
	return listPage(ctx, s, cacheKey{kind: "posts-page", n: number, name: string(reader)}, tags, func(ctx context.Context) (int, error) {
		return s.count(ctx, "posts:"+string(reader), tags, `SELECT count(*) FROM posts WHERE faction IS NULL OR faction = ?`, string(reader))
	}, func(ctx context.Context, offset, limit int) ([]Post, error) {
		return s.posts(ctx, reader, offset, limit)
	})
}

func (s *Store) posts(ctx context.Context, reader Faction, offset, limit int) ([]Post, error) {
	if limit < 1 {
		return nil, nil
	}
	return cached(ctx, s, cacheKey{kind: "posts", id: int64(offset), n: limit, name: string(reader)}, boardTags(reader), func(ctx context.Context) ([]Post, error) {
		rows, err := s.prepared(ctx, nil, `SELECT o.id, p.name, p.faction, o.faction IS NOT NULL, o.body, o.at
			FROM posts o JOIN players p ON p.id = o.player_id
			WHERE o.faction IS NULL OR o.faction = ? ORDER BY o.id DESC LIMIT ? OFFSET ?`).QueryContext(ctx, string(reader), limit, offset)
		posts, err := collect(rows, err, scanPost)
		return posts, wrap("posts", err)
	})
}

// boardTags are the tags of what the faction reader reads of the board:
// the public posts and its faction's channel.
func boardTags(reader Faction) []tag {
	return []tag{{tagBoard, 0}, {tagBoard, factionTag(reader)}}
}

// scanPost scans the columns Posts selects.
func scanPost(row scanner) (*Post, error) {
	var o Post
	var at int64
	if err := row.Scan(&o.ID, &o.Author, &o.Faction, &o.FactionOnly, &o.Body, &at); err != nil {
		return nil, err
	}
	o.At = fromNano(at)
	return &o, nil
}

// collect reads every row of a query into a slice with scan and closes
// rows. err is the query's own error, so a caller passes QueryContext's
// two results straight on.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (*T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func findPlayers(ctx context.Context, q querier) ([]Player, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+playerColumns+` FROM players p ORDER BY p.id`)
	return collect(rows, err, func(row scanner) (*Player, error) { return scanPlayer(row) })
}

const sourceColumns = `id, name, description, secrets, price, base_price, heat, burned_until`

func scanSource(row scanner) (*Source, error) {
	var o Source
	err := row.Scan(&o.ID, &o.Name, &o.Description, &o.Secrets, &o.Price, &o.BasePrice, &o.Heat, &o.BurnedUntil)
	return &o, err
}

const sourcesQuery = `SELECT ` + sourceColumns + ` FROM sources ORDER BY id`

func findSources(ctx context.Context, q querier) ([]Source, error) {
	rows, err := q.QueryContext(ctx, sourcesQuery)
	return collect(rows, err, scanSource)
}

func findSource(ctx context.Context, tx *sql.Tx, id int64) (*Source, error) {
	o, err := scanSource(tx.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "There is no source #%d.", id)
	}
	return o, err
}
