package game

import (
	"context"
	"database/sql"
	"errors"
)

// The read side: what the pages show. None of these writes, and none runs in
// a transaction (each is one statement, consistent on its own).

const playerColumns = `p.id, p.name, p.faction, p.cash, p.agents, p.security, p.secrets, p.ap,
	p.protected_until, p.created_at`

const eventColumns = `id, tick, at, coalesce(player_id, 0), public, text`

type scanner interface{ Scan(dest ...any) error }

// scanPlayer scans pre, then playerColumns.
func scanPlayer(row scanner, pre ...any) (*Player, error) {
	var p Player
	var created int64
	err := row.Scan(append(pre, &p.ID, &p.Name, &p.Faction, &p.Cash, &p.Agents, &p.Security, &p.Secrets, &p.AP,
		&p.ProtectedUntil, &created)...)
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
	rows, err := s.eventsStmt.QueryContext(ctx, playerID, limit)
	return scanEvents(rows, err)
}

// News returns the latest limit public events, newest first (nil for
// limit < 1). The news keeps the last KeepNews lines.
func (s *Store) News(ctx context.Context, limit int) ([]Event, error) {
	if limit < 1 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE public = 1 ORDER BY id DESC LIMIT ?`, limit)
	return scanEvents(rows, err)
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
	sources, err := findSources(ctx, s.db)
	return sources, wrap("sources", err)
}

// Dossiers returns what the player's faction knows about every other player,
// by name (case-insensitive): Target's ID, Name and Faction always, the rest
// as of the latest successful spy by the player or a teammate in this round
// (Known false: none; By names who gathered it). Intel is shared within a
// faction: a teammate's dossier counts as the player's own.
func (s *Store) Dossiers(ctx context.Context, playerID int64) ([]Dossier, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.id, p.name, p.faction, i.tick IS NOT NULL,
		coalesce(i.cash, 0), coalesce(i.agents, 0), coalesce(i.security, 0), coalesce(i.secrets, 0),
		coalesce(i.ap, 0), coalesce(i.tick, 0), coalesce(i.at, 0), coalesce(g.name, '')
		FROM players p
		LEFT JOIN intel i ON i.target_id = p.id AND i.player_id = (
			SELECT j.player_id FROM intel j JOIN players q ON q.id = j.player_id
			WHERE j.target_id = p.id AND q.faction = (SELECT faction FROM players WHERE id = ?)
			ORDER BY j.tick DESC, j.at DESC, j.player_id = ? DESC LIMIT 1)
		LEFT JOIN players g ON g.id = i.player_id
		WHERE p.id != ? ORDER BY p.name COLLATE NOCASE, p.id`, playerID, playerID, playerID)
	ds, err := collect(rows, err, scanDossier)
	return ds, wrap("dossiers", err)
}

// scanDossier scans the columns Dossiers selects.
func scanDossier(row scanner) (*Dossier, error) {
	var d Dossier
	var at int64
	t := &d.Target
	if err := row.Scan(&t.ID, &t.Name, &t.Faction, &d.Known, &t.Cash, &t.Agents, &t.Security, &t.Secrets,
		&t.AP, &d.Tick, &at, &d.By); err != nil {
		return nil, err
	}
	if d.Known {
		d.At = fromNano(at)
	}
	return &d, nil
}

// Ranking returns the scoreboard of the current round: every player by
// Secrets, then cash, then name, and the FBI and MIB totals.
func (s *Store) Ranking(ctx context.Context) (*Ranking, error) {
	players, err := findPlayers(ctx, s.db)
	if err != nil {
		return nil, wrap("ranking", err)
	}
	return Rank(players), nil
}

// Posts returns the latest limit board posts the faction reader may read,
// newest first (nil for limit < 1): every public post and reader's
// faction-only ones ("" for public posts only).
func (s *Store) Posts(ctx context.Context, reader Faction, limit int) ([]Post, error) {
	if limit < 1 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT o.id, p.name, p.faction, o.faction IS NOT NULL, o.body, o.at
		FROM posts o JOIN players p ON p.id = o.player_id
		WHERE o.faction IS NULL OR o.faction = ? ORDER BY o.id DESC LIMIT ?`, string(reader), limit)
	posts, err := collect(rows, err, scanPost)
	return posts, wrap("posts", err)
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

func findSources(ctx context.Context, q querier) ([]Source, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+sourceColumns+` FROM sources ORDER BY id`)
	return collect(rows, err, scanSource)
}

func findSource(ctx context.Context, tx *sql.Tx, id int64) (*Source, error) {
	o, err := scanSource(tx.QueryRowContext(ctx, `SELECT `+sourceColumns+` FROM sources WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "There is no source #%d.", id)
	}
	return o, err
}
