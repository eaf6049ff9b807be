package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// How much history the tick keeps; older events and posts are deleted.
const (
	KeepNews  = 200 // public news lines
	KeepFeed  = 50  // feed lines per player, besides the alerts of private messages (KeepMessageAlerts)
	KeepPosts = 200 // board posts per channel: the public board, and each faction's own
)

// The clock lives in the kv table under four keys; clockColumns selects
// them, so another query can read the clock with its own columns.
const (
	clockColumns = `(SELECT value FROM kv WHERE key = 'tick'),
	(SELECT value FROM kv WHERE key = 'round'),
	(SELECT value FROM kv WHERE key = 'round_start'),
	(SELECT value FROM kv WHERE key = 'last_tick')`
	clockQuery = `SELECT ` + clockColumns
)

// initClock starts the clock at tick 0 of round 1, now, unless it runs already.
func initClock(ctx context.Context, tx *sql.Tx, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO kv (key, value) VALUES
		('tick', 0), ('round', 1), ('round_start', 0), ('last_tick', ?)`, unixNano(now))
	if err != nil {
		return fmt.Errorf("init clock: %w", err)
	}
	return nil
}

// readClock reads the stored clock, through clockStmt bound to tx (nil: no
// transaction). RoundTicks and Interval are left for the caller to fill in.
func readClock(ctx context.Context, tx *sql.Tx, clockStmt *sql.Stmt) (Clock, error) {
	var c Clock
	var last int64
	if err := inTx(ctx, tx, clockStmt).QueryRowContext(ctx).Scan(&c.Tick, &c.Round, &c.RoundStart, &last); err != nil {
		return Clock{}, fmt.Errorf("read clock: %w", err)
	}
	c.LastTick = fromNano(last)
	return c, nil
}

func writeClock(ctx context.Context, tx *sql.Tx, c Clock) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES
		('tick', ?), ('round', ?), ('round_start', ?), ('last_tick', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, c.Tick, c.Round, c.RoundStart, unixNano(c.LastTick))
	if err != nil {
		return fmt.Errorf("write clock: %w", err)
	}
	return nil
}

// DefaultPaySlice is how many players one step of a payday pays
// (Store.TickStep) when Options.PaySlice is 0: 4 to 6 ms of the loop's
// CPU at 10,000 players with as many streams open on the 2-core machine
// of docs/live.md (up to 9 in a step whose commit checkpoints the WAL),
// where paying them all in one transaction took 130 to 160 ms, and a
// step of 150 players 7 to 10 ms.
const DefaultPaySlice = 100

// Tick applies every tick due by Options.Now: one per whole TickInterval
// since Clock.LastTick, which moves on by that many intervals (so ticks
// keep their cadence however late the timer fires). It returns how many
// ticks the clock moved; 0 when none was due. It runs TickStep until no
// step is left, so it takes as long as all of them: a server that must not
// stall on a payday calls TickStep instead.
//
// After downtime it catches up: up to RoundTicks missed ticks are each played
// in full (income, AP, sources, round end). If more than a round was missed,
// the game fast-forwards instead: the round in progress ends with its
// standings as they are, a note in the news says so, and a new round starts
// at the current tick. Either way the work is bounded by one round of ticks.
//
// Each call that applies a tick also deletes expired sessions, events past
// KeepNews public and KeepFeed per-player lines (the alerts of private
// messages apart: KeepMessageAlerts per writer), board posts past the
// newest KeepPosts of each channel, reports past the newest KeepReports per
// actor, messages past the newest KeepMessages per writer and recipient,
// and changes past the newest Options.KeepChanges. A call with nothing due costs one read and
// takes no write lock, so the caller may poll more often than TickInterval
// to apply ticks close to when they are due.
func (s *Store) Tick(ctx context.Context) (int, error) {
	total := 0
	for {
		n, more, err := s.TickStep(ctx)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

// TickStep applies the next step of the ticks due by Options.Now (see
// Tick), in one transaction, and returns how many ticks the clock moved
// and whether another step is due at once (more: call TickStep again
// soon, after serving what waits). On an error nothing of the step is
// applied, and the next call tries it again.
//
// A step is every due tick at once, except for a payday of more than
// Options.PaySlice players that is due alone (not a round's end, not a
// catch-up after downtime): that tick takes several steps, none of which
// touches more than PaySlice players. The first fixes the payday's lead
// (the most Secrets anyone holds), head count and Cheapest price for CatchUp; each pays
// the next PaySlice players by id, with the feed line of anyone an agent
// walked out on; the last moves the clock and applies the rest of the tick
// (sources, the end of protections, the tick's change for the live pages,
// the prune). The progress is kept in the database (kv), so steps cut
// short by a crash, or continued by another process holding the tick
// lease, go on from the last one committed. Between steps the clock still
// shows the tick before: a player already paid sees the pay before the
// tick's change reaches the pages, and an order given meanwhile counts
// after the payday for a player paid, before it for one not yet paid.
//
// The prune that follows each applied tick (see Tick) takes steps of its
// own, after the tick's, which applies the whole of the tick's rules: the
// first deletes the sessions, news, posts and changes past what is kept,
// each next one the feed lines, reports and messages of up to
// Options.PruneSlice players (the first prune of a database ranks a whole
// history a step). A step reads no more than that, so at 10,000 players
// none holds the caller for long, where the prune in one step took 45 ms
// at make capacity's pace (BenchmarkTickAtPace). Between these steps the
// tick is applied and some histories hold more than is kept, as they do
// between ticks; rows written meanwhile are the next tick's to prune. A
// tick falling due while a prune is under way is applied once it ends.
// The prune's progress is kept in kv too.
func (s *Store) TickStep(ctx context.Context) (ticks int, more bool, err error) {
	defer func() { s.ticking.Store(more) }()
	// Most calls find nothing due: say so without taking the write lock.
	if c, err := s.Clock(ctx); err != nil {
		return 0, false, err
	} else if dueTicks(c, s.now()) == 0 && !s.pruning.Load() {
		return 0, false, nil
	}
	pruning := false
	err = s.update(ctx, func(tx *sql.Tx) error {
		ticks, more, pruning = 0, false, false
		c, err := readClock(ctx, tx, s.clockStmt)
		if err != nil {
			return err
		}
		c.RoundTicks, c.Interval = s.opt.RoundTicks, s.opt.TickInterval
		now := s.now()
		n := dueTicks(c, now)
		// A prune under way goes first, so that a tick's prune ends
		// before the next tick starts another.
		if under, err := s.pruneUnderWay(ctx, tx); err != nil || under {
			if err == nil {
				pruning, err = s.pruneSlice(ctx, tx, s.opt.PruneSlice)
			}
			more = pruning || n > 0
			return err
		}
		if n == 0 {
			return nil // another Store on this file got there first
		}
		pay, err := s.payday(ctx, tx, c, n)
		if err != nil {
			return err
		}
		if pay == nil {
			ticks = int(n)
			pruning, err = s.applyTicks(ctx, tx, c, n, false)
			more = pruning
			return err
		}
		if paid, err := s.paySlice(ctx, tx, c, pay); err != nil || !paid {
			more = true
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key IN ('pay_cursor', 'pay_lead', 'pay_players', 'pay_cheapest')`); err != nil {
			return fmt.Errorf("end payday: %w", err)
		}
		ticks = 1
		pruning, err = s.applyTicks(ctx, tx, c, 1, true)
		more = pruning || n > 1
		return err
	})
	if err != nil {
		// Rolled back: no step applied. A prune may be under way (this
		// Store's or another's): the next call looks.
		s.pruning.Store(true)
		return 0, false, wrap("tick", err)
	}
	s.pruning.Store(pruning)
	return ticks, more, nil
}

// paydayState is a payday paid in slices (TickStep), as kept in kv: the
// players up to id cursor are paid, with lead and players for CatchUp and
// cheapest, the Cheapest Secret on sale, for its ceiling (see Payday).
type paydayState struct {
	cursor                  int64
	lead, players, cheapest int
}

// payday returns the payday under way, or starts one if the next tick is
// a payday to pay in slices (n is how many ticks are due); nil when the
// due ticks are applied at once.
func (s *Store) payday(ctx context.Context, tx *sql.Tx, c Clock, n int64) (*paydayState, error) {
	var cursor, lead, players, cheapest sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT (SELECT value FROM kv WHERE key = 'pay_cursor'),
		(SELECT value FROM kv WHERE key = 'pay_lead'), (SELECT value FROM kv WHERE key = 'pay_players'),
		(SELECT value FROM kv WHERE key = 'pay_cheapest')`).
		Scan(&cursor, &lead, &players, &cheapest)
	if err != nil {
		return nil, fmt.Errorf("read payday: %w", err)
	}
	if cursor.Valid {
		return &paydayState{cursor.Int64, int(lead.Int64), int(players.Int64), int(cheapest.Int64)}, nil
	}
	tick := c.Tick + 1
	if n != 1 || tick%PayTicks != 0 || tick >= c.RoundEnd() {
		return nil, nil
	}
	pay := &paydayState{}
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(max(secrets), 0),
		(SELECT coalesce(min(price), 0) FROM sources WHERE secrets > 0 AND burned_until <= ?) FROM players`, tick).
		Scan(&pay.players, &pay.lead, &pay.cheapest); err != nil {
		return nil, fmt.Errorf("start payday: %w", err)
	}
	if pay.players <= s.opt.PaySlice {
		return nil, nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES ('pay_cursor', 0), ('pay_lead', ?), ('pay_players', ?),
		('pay_cheapest', ?)`, pay.lead, pay.players, pay.cheapest)
	if err != nil {
		return nil, fmt.Errorf("start payday: %w", err)
	}
	return pay, nil
}

// paySlice pays the next Options.PaySlice players of pay, the payday of
// the tick after c's, and moves its cursor past them; paid reports that
// none was left to pay.
func (s *Store) paySlice(ctx context.Context, tx *sql.Tx, c Clock, pay *paydayState) (paid bool, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+playerColumns+` FROM players p WHERE p.id > ? ORDER BY p.id LIMIT ?`,
		pay.cursor, s.opt.PaySlice)
	players, err := collect(rows, err, func(row scanner) (*Player, error) { return scanPlayer(row) })
	if err != nil {
		return false, fmt.Errorf("pay players: %w", err)
	}
	if len(players) == 0 {
		return true, nil
	}
	before := slices.Clone(players)
	tick, at := c.Tick+1, c.LastTick.Add(c.Interval)
	notes := Payday(tick, players, pay.lead, pay.players, pay.cheapest)
	if err := savePlayers(ctx, tx, before, players); err != nil {
		return false, err
	}
	if err := insertNotes(ctx, tx, 0, notes, func(int64) time.Time { return at }); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE kv SET value = ? WHERE key = 'pay_cursor'`, players[len(players)-1].ID); err != nil {
		return false, fmt.Errorf("pay players: %w", err)
	}
	return false, nil
}

// dueTicks returns how many whole intervals have passed since c.LastTick.
func dueTicks(c Clock, now time.Time) int64 {
	elapsed := now.Sub(c.LastTick)
	if elapsed < c.Interval {
		return 0
	}
	return int64(elapsed / c.Interval)
}

// applyTicks applies n ticks from c; paid says the first one's payday was
// paid already, in slices (then n is 1). It then starts the prune of the
// histories (expire) and reports whether some of it is left for the next
// steps (pruning).
func (s *Store) applyTicks(ctx context.Context, tx *sql.Tx, c Clock, n int64, paid bool) (pruning bool, err error) {
	w, err := loadWorld(ctx, tx, c, n, paid)
	if err != nil {
		return false, err
	}
	before := World{Clock: c, Players: slices.Clone(w.Players), Sources: slices.Clone(w.Sources)}
	var notes []Note
	s.random(func(rng *rand.Rand) {
		if n > c.RoundTicks {
			notes = w.FastForward(n)
			return
		}
		for range n {
			notes = append(notes, w.advance(rng, paid)...)
		}
	})
	w.Clock.LastTick = c.LastTick.Add(time.Duration(n) * c.Interval)
	if err := saveWorld(ctx, tx, &before, w); err != nil {
		return false, err
	}
	if w.Clock.Round == c.Round {
		// The broker's winners: the live ranking follows them without
		// reading the page again (a round's end changes everyone, and the
		// page reads the ranking again instead).
		if err := recordSecrets(ctx, tx, before.Players, w.Players, w.Clock.LastTick); err != nil {
			return false, err
		}
	}
	if err := recordChange(ctx, tx, ChangeTick, 0, w.Clock.Tick, false, w.Clock.LastTick); err != nil {
		return false, err
	}
	at := func(tick int64) time.Time { return c.LastTick.Add(time.Duration(tick-c.Tick) * c.Interval) }
	if err := insertNotes(ctx, tx, 0, notes, at); err != nil {
		return false, err
	}
	for _, r := range w.Ended {
		r.EndedAt = at(r.EndTick)
		if err := insertRound(ctx, tx, &r); err != nil {
			return false, err
		}
	}
	return s.expire(ctx, tx)
}

// loadWorld loads what n ticks from c read and change. Ticks with neither
// a payday (or one paid already: paid) nor a round's end change no player
// but the bidders at an auction, and read only those and the players whose
// protection runs out in them (Advance's notes), so only those are loaded:
// reading all 10,000 players of a seeded world was most of such a tick.
func loadWorld(ctx context.Context, tx *sql.Tx, c Clock, n int64, paid bool) (*World, error) {
	var players []Player
	var err error
	if touchesEveryPlayer(c, n, paid) {
		players, err = findPlayers(ctx, tx)
	} else {
		rows, qerr := tx.QueryContext(ctx, `SELECT `+playerColumns+` FROM players p
			WHERE p.protected_until > ? AND p.protected_until <= ? OR ? AND p.bid > 0 ORDER BY p.id`,
			c.Tick, c.Tick+n, auctionIn(c, n))
		players, err = collect(rows, qerr, func(row scanner) (*Player, error) { return scanPlayer(row) })
	}
	if err != nil {
		return nil, fmt.Errorf("load players: %w", err)
	}
	sources, err := findSources(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("load sources: %w", err)
	}
	return &World{Clock: c, Players: players, Sources: sources}, nil
}

// auctionIn reports whether the broker sells (AuctionDue) in any of the n
// ticks after c's.
func auctionIn(c Clock, n int64) bool {
	for t := c.Tick + 1; t <= c.Tick+n; t++ {
		if AuctionDue(c, t) {
			return true
		}
	}
	return false
}

// touchesEveryPlayer reports whether any of the n ticks after c's is a
// payday not paid already (paid), the round's last auction (which bids
// every player's cash: lastCall) or ends the round (n past RoundTicks: the
// fast-forward ends it).
func touchesEveryPlayer(c Clock, n int64, paid bool) bool {
	return n > c.RoundTicks || !paid && c.Tick/PayTicks != (c.Tick+n)/PayTicks || c.Tick+n >= c.RoundEnd()-1
}

// saveWorld writes the clock and whichever players and sources changed since
// before (logging the sources' changes for the live pages; the players' a
// tick changes are left to the tick's own change: see ChangePlayer); a new
// round also clears every dossier.
func saveWorld(ctx context.Context, tx *sql.Tx, before, w *World) error {
	if err := savePlayers(ctx, tx, before.Players, w.Players); err != nil {
		return err
	}
	for i, o := range w.Sources {
		if o != before.Sources[i] {
			if err := updateSource(ctx, tx, &o, w.Clock.LastTick); err != nil {
				return err
			}
		}
	}
	if w.Clock.Round != before.Clock.Round {
		if _, err := tx.ExecContext(ctx, `DELETE FROM intel`); err != nil {
			return fmt.Errorf("clear intel: %w", err)
		}
	}
	return writeClock(ctx, tx, w.Clock)
}

// savePlayers writes the players that changed since before through one
// prepared statement: a payday changes every player, and preparing the
// UPDATE for each of 10,000 players took most of the tick.
func savePlayers(ctx context.Context, tx *sql.Tx, before, players []Player) error {
	var st *sql.Stmt
	for i := range players {
		p := &players[i]
		if *p == before[i] {
			continue
		}
		if st == nil {
			var err error
			if st, err = tx.PrepareContext(ctx, updatePlayerSQL); err != nil {
				return fmt.Errorf("update players: %w", err)
			}
			defer st.Close()
		}
		if _, err := st.ExecContext(ctx, playerFigures(p)...); err != nil {
			return fmt.Errorf("update player %d: %w", p.ID, err)
		}
	}
	return nil
}

// expire starts the prune that keeps the database bounded however busy the
// game, for the steps after the tick's (see pruneSlice): the first
// deletes expired sessions, the news past KeepNews, the posts past
// KeepPosts of each channel and the changes past Options.KeepChanges, the
// next the feed lines, reports and messages past what each history keeps
// per player, Options.PruneSlice players a step. It reports that the
// prune is under way.
func (s *Store) expire(ctx context.Context, tx *sql.Tx) (pruning bool, err error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES ('prune_history', -1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`); err != nil {
		return false, fmt.Errorf("expire: %w", err)
	}
	return true, nil
}

// expireRows deletes expired sessions, the news past KeepNews, the posts
// past KeepPosts of each channel and the changes past Options.KeepChanges.
func (s *Store) expireRows(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []struct {
		query string
		args  []any
	}{
		{`DELETE FROM sessions WHERE expires_at <= ?`, []any{unixNano(s.now())}},
		// public = 1 (every news line is) reads the news through
		// events_public; without it the delete read the whole table up
		// to the cut, every feed line of every player: 20 to 30 ms of
		// each tick at 8,000 players (make capacity).
		{`DELETE FROM events WHERE public = 1 AND player_id IS NULL AND id <=
			(SELECT id FROM events WHERE public = 1 ORDER BY id DESC LIMIT 1 OFFSET ?)`, []any{KeepNews}},
		{`DELETE FROM changes WHERE id <= (SELECT id FROM changes ORDER BY id DESC LIMIT 1 OFFSET ?)`, []any{s.opt.KeepChanges}},
	} {
		if _, err := tx.ExecContext(ctx, q.query, q.args...); err != nil {
			return fmt.Errorf("expire: %w", err)
		}
	}
	for _, channel := range []Faction{"", FBI, MIB} {
		if err := prunePosts(ctx, tx, channel); err != nil {
			return err
		}
	}
	return nil
}

// prunePosts deletes the posts of one channel of the board (a faction's,
// or "" for the public board) past its newest KeepPosts, so that no side
// posting, on its channel or in public, removes what is on another
// channel. A faction's channel pruned, its players' unread counts
// (Player.UnreadFaction) lose the posts gone: no player's count is more
// than the posts by others the channel still holds, which are its newest,
// the ones a count covers.
func prunePosts(ctx context.Context, tx *sql.Tx, channel Faction) error {
	var ch any // NULL: the public board
	if channel != "" {
		ch = string(channel)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM posts WHERE faction IS ?1 AND id <=
		(SELECT id FROM posts WHERE faction IS ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)`, ch, KeepPosts)
	if err != nil {
		return fmt.Errorf("prune posts: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 || channel == "" {
		return err
	}
	var kept int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM posts WHERE faction = ?`, ch).Scan(&kept); err != nil {
		return fmt.Errorf("prune posts: %w", err)
	}
	// Everyone at most the posts kept, then the authors among them at most
	// the posts by others.
	if _, err := tx.ExecContext(ctx, `UPDATE players SET unread_faction = ?2 WHERE faction = ?1 AND unread_faction > ?2`,
		ch, kept); err != nil {
		return fmt.Errorf("prune posts: %w", err)
	}
	_, err = tx.ExecContext(ctx, `WITH own (id, n) AS (SELECT player_id, count(*) FROM posts WHERE faction = ?1 GROUP BY player_id)
		UPDATE players SET unread_faction = ?2 - own.n FROM own
		WHERE players.id = own.id AND players.unread_faction > ?2 - own.n`, ch, kept)
	if err != nil {
		return fmt.Errorf("prune posts: %w", err)
	}
	return nil
}

// DefaultPruneSlice is how many players' histories one step of a tick's
// prune (Store.TickStep) prunes when Options.PruneSlice is 0. At make
// capacity's pace (10,000 players, an order each a minute, a tick every
// 10 s) a tick's prune has 3,300 feeds and 1,700 reports to prune: 45 ms
// in one step (BenchmarkTickAtPace).
const DefaultPruneSlice = 250

// The prune of the histories under way is kept in kv, so that a restart,
// or another process taking the tick lease, goes on with it:
// prune_history, the index in histories of the history being pruned (its
// presence says a prune is under way); prune_top, that history's newest
// id when its prune began (rows above it are left for the next prune);
// prune_cursor, the last group (its first column) pruned.

// pruneUnderWay reports whether a tick's prune of the histories is under
// way: some of it is left for the next steps.
func (s *Store) pruneUnderWay(ctx context.Context, tx *sql.Tx) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM kv WHERE key = 'prune_history'`).Scan(&n); err != nil {
		return false, fmt.Errorf("prune: %w", err)
	}
	return n > 0, nil
}

// pruneHistories prunes every one of histories at once (Seed's: no step
// of a tick).
func (s *Store) pruneHistories(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO kv (key, value) VALUES ('prune_history', 0)`); err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	for {
		if pruning, err := s.pruneSlice(ctx, tx, math.MaxInt); err != nil || !pruning {
			return err
		}
	}
}

// pruneSlice goes on with the prune under way (expire): its first slice
// deletes what expireRows does; the next ones go history after history,
// up to budget groups each (of their first column: players; the first
// prune of a database ranks a whole history, and ends the slice). It
// reports whether some is left for the next slice.
func (s *Store) pruneSlice(ctx context.Context, tx *sql.Tx, budget int) (pruning bool, err error) {
	var i int
	var top, cursor sql.NullInt64 // top: the prune of histories[i] has begun
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT value FROM kv WHERE key = 'prune_history'),
		(SELECT value FROM kv WHERE key = 'prune_top'), (SELECT value FROM kv WHERE key = 'prune_cursor')`).
		Scan(&i, &top, &cursor); err != nil {
		return false, fmt.Errorf("prune: %w", err)
	}
	if i < 0 {
		if err := s.expireRows(ctx, tx); err != nil {
			return false, err
		}
		i, budget = 0, 0
	}
	for i < len(histories) && budget > 0 {
		h := histories[i]
		var mark sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, h.mark).Scan(&mark); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("prune %s: %w", h.name, err)
		}
		if !top.Valid { // h's prune begins: up to its newest row
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM `+h.table).Scan(&top); err != nil {
				return false, fmt.Errorf("prune %s: %w", h.name, err)
			}
			cursor = sql.NullInt64{Valid: true}
		}
		done := true
		switch {
		case !mark.Valid:
			// The first prune of this database ranks every group, at once.
			if _, err := tx.ExecContext(ctx, h.pruneSQL(true), h.keep, h.keep); err != nil {
				return false, fmt.Errorf("prune %s: %w", h.name, err)
			}
			budget = 0
		case top.Int64 != mark.Int64:
			n, last, err := h.pruneGroups(ctx, tx, mark.Int64, top.Int64, cursor.Int64, budget)
			if err != nil {
				return false, err
			}
			done, budget, cursor.Int64 = n < budget, budget-n, last
		}
		if !done {
			continue // the budget is spent; the next step goes on with h
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, h.mark, top.Int64); err != nil {
			return false, fmt.Errorf("prune %s: %w", h.name, err)
		}
		i, top, cursor = i+1, sql.NullInt64{}, sql.NullInt64{}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM kv WHERE key IN ('prune_history', 'prune_top', 'prune_cursor')`); err != nil {
		return false, fmt.Errorf("prune: %w", err)
	}
	if i == len(histories) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES ('prune_history', ?)`, i); err != nil {
		return false, fmt.Errorf("prune: %w", err)
	}
	if top.Valid {
		if _, err := tx.ExecContext(ctx, `INSERT INTO kv (key, value) VALUES ('prune_top', ?), ('prune_cursor', ?)`,
			top.Int64, cursor.Int64); err != nil {
			return false, fmt.Errorf("prune: %w", err)
		}
	}
	return true, nil
}

// A history is a table kept per player: of each group, the rows that match
// where and share a value of each column of group, the tick keeps the
// newest keep (by id) and deletes the older ones.
type history struct {
	name  string   // for errors
	table string   //
	group []string // the columns rows are grouped by, one or two; the first a player's id
	where string   // which rows of table belong to a group: an SQL condition
	keep  int
	mark  string // the kv key of the table's newest id at the last prune
}

// histories are the tables pruned per player: the private lines of each
// feed but the alerts of private messages, which are kept per writer and
// recipient, as the messages themselves are (so that no writer removes
// what another wrote, nor pushes other lines off a wire); the reports of
// each actor.
var histories = []history{
	{name: "feeds", table: "events", group: []string{"player_id"},
		where: "player_id IS NOT NULL AND public = 0 AND from_id IS NULL", keep: KeepFeed, mark: "feed_pruned"},
	{name: "message alerts", table: "events", group: []string{"player_id", "from_id"},
		where: "from_id IS NOT NULL", keep: KeepMessageAlerts, mark: "alerts_pruned"},
	{name: "reports", table: "reports", group: []string{"actor_id"}, where: "true", keep: KeepReports, mark: "reports_pruned"},
	{name: "messages", table: "messages", group: []string{"to_id", "from_id"}, where: "true", keep: KeepMessages,
		mark: "messages_pruned"},
}

// A history's prune deletes the rows past the newest h.keep of each of
// its groups. It prunes only the groups with a row newer than the last
// prune (kv's h.mark, the table's newest id then; the first time, the
// groups of more than h.keep rows), as only those can have grown past
// h.keep, and none at all when the table has no newer row. Ranking every
// group on every tick cost about 25 µs a player for the feeds (200 ms of
// the loop at 8,000 players, make capacity), and seconds for the reports
// and messages of 10,000 players at their limits (BenchmarkTickHistory).
// The mark is kept in the database, so a restart, or another process
// taking the tick lease, does not go through every group again.
//
// This relies on ids that only grow. SQLite gives a new row one more than
// the table's largest id; the game deletes these rows only here (players
// are never deleted), and never a group's newest, so never the table's
// largest id. A row deleted by hand from the top of a table would let a
// new row reuse its id unseen: its group is pruned when it next grows.

// pruneGroups prunes the groups of h with a row above id mark and up to
// id top whose first column is above after, the first budget of them by
// that column (and every group sharing it), and returns how many it
// pruned (fewer than budget: none is left) and the last one's column.
func (h history) pruneGroups(ctx context.Context, tx *sql.Tx, mark, top, after int64, budget int) (n int, last int64, err error) {
	if err := tx.QueryRowContext(ctx, h.groupsSQL(), mark, top, after, budget).Scan(&n, &last); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w", h.name, err)
	}
	if n == 0 {
		return 0, after, nil
	}
	if _, err := tx.ExecContext(ctx, h.pruneSQL(false), mark, top, after, last, h.keep); err != nil {
		return 0, 0, fmt.Errorf("prune %s: %w", h.name, err)
	}
	return n, last, nil
}

// groupsSQL counts the groups pruneGroups prunes, and gives the last one's
// first column: of the rows above an id and up to another (the first two
// arguments), the first groups by their first column above a third value,
// up to a number (the last).
//
// Both this and pruneSQL's rows above the last prune read the table by id,
// the rows written since (a tick's at make capacity's pace, 3,300 feed
// lines at 10,000 players): the unary + keeps SQLite from reading them
// down the index on the group's columns instead, every row of every
// player above the third value to find the few new ones, 10 to 16 ms of
// CPU for the 12 to 36 feed lines of a payday beside 100,000 kept ones
// (BenchmarkLiveStreams, 10,000 players), against under 0.5 ms by id.
func (h history) groupsSQL() string {
	first := h.group[0]
	return `SELECT count(*), coalesce(max(g), 0) FROM (SELECT DISTINCT ` + first + ` AS g FROM ` + h.table + `
		WHERE ` + h.where + ` AND id > ? AND id <= ? AND +` + first + ` > ? ORDER BY g LIMIT ?)`
}

// pruneSQL is h's prune: of each group with a row above an id and up to
// another whose first column is above a third value and up to a fourth
// (the first four arguments), or, for all, of each group of more than keep
// rows (the first), the rows past the newest keep (the last). It finds in
// each group the newest row to delete, keep rows down its index on
// (group, ...), and deletes it and the older ones: ranking every row of
// the groups with a window function took ten to twenty times as long.
func (h history) pruneSQL(all bool) string {
	cols := strings.Join(h.group, ", ")
	grps := make([]string, len(h.group)) // grp0, grp1: the group's columns in the CTEs
	var inGroup, inCut []string          // a row of table in group g, in the cut's group
	for i, c := range h.group {
		grps[i] = fmt.Sprintf("grp%d", i)
		inGroup = append(inGroup, c+` = g.`+grps[i])
		inCut = append(inCut, `r.`+c+` = cut.`+grps[i])
	}
	grpList := strings.Join(grps, ", ")
	grown := `SELECT ` + cols + ` FROM ` + h.table + ` WHERE ` + h.where
	if all {
		grown += ` GROUP BY ` + cols + ` HAVING count(*) > ?`
	} else {
		grown += ` AND id > ? AND id <= ? AND +` + h.group[0] + ` > ? AND +` + h.group[0] + ` <= ?`
	}
	// MATERIALIZED: else SQLite reads the whole index for DISTINCT.
	return `WITH grown (` + grpList + `) AS MATERIALIZED (` + grown + `),
	cut (` + grpList + `, top) AS MATERIALIZED (SELECT ` + grpList + `, (SELECT id FROM ` + h.table + `
		WHERE ` + strings.Join(inGroup, " AND ") + ` AND ` + h.where + ` ORDER BY id DESC LIMIT 1 OFFSET ?)
		FROM (SELECT DISTINCT ` + grpList + ` FROM grown) g)
	DELETE FROM ` + h.table + ` WHERE id IN (SELECT r.id FROM cut JOIN ` + h.table + ` r
		ON ` + strings.Join(inCut, " AND ") + ` AND r.id <= cut.top WHERE ` + h.where + `)`
}
