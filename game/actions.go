package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Act plays action a for the player, in one transaction: the rules (Resolve)
// run on the rows as they are inside it, and their changes to the player, the
// target or source, the dossier, the board, the actor's feed and the news are
// written together or not at all. A refused action changes nothing.
//
// Errors: EINVALID with a message naming the problem (unknown action, not
// enough AP or cash, bad offer, self-target, protected target, burned source,
// empty post, a post within PostCooldown of the player's last...); ENOTFOUND
// for no such player, source or target.
func (s *Store) Act(ctx context.Context, playerID int64, a Action) (Outcome, error) {
	var res Result
	changed := &touches{}
	err := s.updateTouching(ctx, changed, func(tx *sql.Tx) error {
		t, err := s.loadTurn(ctx, tx, playerID, a)
		if err != nil {
			return err
		}
		was := t.players()
		s.random(func(rng *rand.Rand) {
			t.Rand = rng
			res, err = Resolve(t, a)
		})
		if err != nil {
			return err
		}
		return s.saveTurn(ctx, tx, t, was, &res, changed)
	})
	if err != nil {
		return Outcome{}, wrap("act", err)
	}
	return res.Outcome, nil
}

// loadTurn reads the clock, the actor, and the target or source a needs
// (for a spy or steal, with what the odds need: the number of players).
func (s *Store) loadTurn(ctx context.Context, tx *sql.Tx, playerID int64, a Action) (*Turn, error) {
	c, err := readClock(ctx, tx, s.clockStmt)
	if err != nil {
		return nil, err
	}
	t := &Turn{Tick: c.Tick, Now: s.now()}
	if t.Actor, err = findPlayer(ctx, tx, s.playerStmt, playerID); err != nil {
		return nil, err
	}
	switch a.Kind {
	case PostMessage:
		if t.LastPost, err = lastPost(ctx, tx, playerID); err != nil {
			return nil, err
		}
	case Message:
		var id, full int64
		err := tx.QueryRowContext(ctx, `SELECT id, (SELECT messages_full_at FROM players WHERE id = ?)
			FROM players WHERE name = ?`, playerID, strings.TrimSpace(a.To)).Scan(&id, &full)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, Errorf(ENOTFOUND, "There is no agent called %q to write to.", a.To)
		} else if err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		if full != 0 {
			t.MessagesFull = fromNano(full)
		}
		if t.Target, err = findPlayer(ctx, tx, s.playerStmt, id); err != nil {
			return nil, err
		}
	case Spy, Steal:
		if t.Target, err = findPlayer(ctx, tx, s.playerStmt, a.TargetID); ErrorCode(err) == ENOTFOUND {
			return nil, Errorf(ENOTFOUND, "There is no player #%d to target.", a.TargetID)
		} else if err != nil {
			return nil, err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM players`).Scan(&t.Players); err != nil {
			return nil, fmt.Errorf("players: %w", err)
		}
		if a.Kind == Steal {
			if t.Cased, err = cased(ctx, tx, t.Actor, a.TargetID, t.Tick); err != nil {
				return nil, err
			}
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(min(price), 0) FROM sources WHERE secrets > 0 AND burned_until <= ?`,
				t.Tick).Scan(&t.Cheapest); err != nil {
				return nil, fmt.Errorf("cheapest source: %w", err)
			}
		}
	case Haggle:
		if t.Source, err = findSource(ctx, tx, a.SourceID); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// cased reports whether actor's side holds a dossier on target that still
// cases the place at tick (Cased).
func cased(ctx context.Context, tx *sql.Tx, actor *Player, target, tick int64) (bool, error) {
	var newest sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT max(i.tick) FROM intel i JOIN players q ON q.id = i.player_id
		WHERE i.target_id = ? AND q.faction = ?`, target, actor.Faction).Scan(&newest)
	if err != nil {
		return false, fmt.Errorf("dossier on player %d: %w", target, err)
	}
	return newest.Valid && Cased(newest.Int64, tick), nil
}

// lastPost returns when the player last posted; the zero time for never.
func lastPost(ctx context.Context, tx *sql.Tx, playerID int64) (time.Time, error) {
	var at int64
	if err := tx.QueryRowContext(ctx, `SELECT last_post_at FROM players WHERE id = ?`, playerID).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("last post of player %d: %w", playerID, err)
	}
	if at == 0 {
		return time.Time{}, nil
	}
	return fromNano(at), nil
}

// players returns copies of the turn's actor and, if there is one, its
// target, in that order.
func (t *Turn) players() []Player {
	ps := []Player{*t.Actor}
	if t.Target != nil {
		ps = append(ps, *t.Target)
	}
	return ps
}

// saveTurn writes what Resolve changed; was is t.players() before it. It
// adds what it wrote to changed, for the read cache.
func (s *Store) saveTurn(ctx context.Context, tx *sql.Tx, t *Turn, was []Player, res *Result, changed *touches) error {
	now := t.Now
	for _, p := range []*Player{t.Actor, t.Target} {
		if p != nil && p.ID != 0 {
			if err := updatePlayer(ctx, tx, p); err != nil {
				return err
			}
		}
	}
	turnTouches(changed, t, was, res)
	if err := recordStanding(ctx, tx, was, t.players(), now); err != nil {
		return err
	}
	if t.Source != nil {
		if err := updateSource(ctx, tx, t.Source, now); err != nil {
			return err
		}
	}
	if res.Intel {
		if err := upsertIntel(ctx, tx, t.Actor.ID, t.Target, t.Tick, now); err != nil {
			return err
		}
	}
	if res.Report != nil {
		if err := insertReport(ctx, tx, res.Report, now); err != nil {
			return err
		}
	}
	if !t.Actor.Acted {
		if _, err := tx.ExecContext(ctx, `UPDATE players SET acted = 1 WHERE id = ?`, t.Actor.ID); err != nil {
			return fmt.Errorf("update acted: %w", err)
		}
		t.Actor.Acted = true
	}
	if res.Message != "" {
		if err := insertMessage(ctx, tx, t.Actor.ID, t.Target.ID, res.Message, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE players SET messages_full_at = ? WHERE id = ?`,
			unixNano(res.MessagesFull), t.Actor.ID); err != nil {
			return fmt.Errorf("update message allowance: %w", err)
		}
	}
	if res.Post != "" {
		if err := insertPost(ctx, tx, t.Actor.ID, res.Post, res.PostFaction, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE players SET last_post_at = ? WHERE id = ?`,
			unixNano(now), t.Actor.ID); err != nil {
			return fmt.Errorf("update last post: %w", err)
		}
	}
	return insertNotes(ctx, tx, t.Actor.ID, res.Notes, func(int64) time.Time { return now })
}

// turnTouches adds to changed what saveTurn writes of t and res (was is
// t.players() before Resolve): every row it updates or inserts that a
// cached read reads.
func turnTouches(changed *touches, t *Turn, was []Player, res *Result) {
	for i, p := range t.players() {
		changed.player(p.ID)
		if p.Secrets != was[i].Secrets {
			changed.add(tag{kind: tagSecrets}, tag{tagStanding, p.ID})
		}
		if p.ProtectedUntil != was[i].ProtectedUntil {
			changed.add(tag{kind: tagProtection}, tag{tagStanding, p.ID})
		}
	}
	if t.Source != nil {
		changed.add(tag{kind: tagSources})
	}
	if res.Intel {
		changed.add(tag{tagIntel, factionTag(t.Actor.Faction)}, intelOnTag(t.Actor.Faction, t.Target.ID))
	}
	if res.Report != nil {
		changed.add(tag{tagReports, t.Actor.ID}, tag{tagReports, t.Target.ID})
	}
	if res.Message != "" {
		changed.add(tag{tagInbox, t.Actor.ID}, tag{tagInbox, t.Target.ID})
	}
	if res.Post != "" {
		changed.add(tag{tagBoard, factionTag(res.PostFaction)})
		if res.PostFaction != "" {
			changed.add(tag{tagMembers, factionTag(res.PostFaction)})
		}
	}
	changed.notes(res.Notes)
}

// updatePlayerSQL writes a player's figures (playerFigures), its id last.
const updatePlayerSQL = `UPDATE players SET cash = ?, agents = ?, security = ?, secrets = ?, ap = ?,
	protected_until = ?, rounds_played = ?, rounds_won = ?, best_place = ?, gold = ?, silver = ?, bronze = ?,
	bid = ?, bid_tick = ?, trap = ?, sweep_until = ?, lie_low_until = ?, last_lot = ? WHERE id = ?`

func updatePlayer(ctx context.Context, tx *sql.Tx, p *Player) error {
	if _, err := tx.ExecContext(ctx, updatePlayerSQL, playerFigures(p)...); err != nil {
		return fmt.Errorf("update player %d: %w", p.ID, err)
	}
	return nil
}

// playerFigures are updatePlayerSQL's arguments for p.
func playerFigures(p *Player) []any {
	c := p.Career
	return []any{p.Cash, p.Agents, p.Security, p.Secrets, p.AP, p.ProtectedUntil,
		c.Rounds, c.Wins, c.BestPlace, c.Gold, c.Silver, c.Bronze, p.Bid, p.BidTick, p.Trap, p.SweepUntil, p.LieLowUntil, p.LastLot, p.ID}
}

// updateSource writes the source and logs the change, dated at.
func updateSource(ctx context.Context, tx *sql.Tx, o *Source, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE sources SET secrets = ?, price = ?, heat = ?, burned_until = ? WHERE id = ?`,
		o.Secrets, o.Price, o.Heat, o.BurnedUntil, o.ID)
	if err != nil {
		return fmt.Errorf("update source %d: %w", o.ID, err)
	}
	return recordChange(ctx, tx, ChangeSource, 0, o.ID, false, at)
}

// insertPost adds a board post and logs the change. only is the faction
// of a post on the faction-only channel, "" for one everybody reads.
func insertPost(ctx context.Context, tx *sql.Tx, playerID int64, body string, only Faction, at time.Time) error {
	var faction any // NULL: everybody reads it
	if only != "" {
		faction = string(only)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO posts (player_id, body, at, faction) VALUES (?, ?, ?, ?)`,
		playerID, body, unixNano(at), faction)
	if err != nil {
		return fmt.Errorf("insert post: %w", err)
	}
	if only != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE players SET unread_faction = unread_faction + 1
			WHERE faction = ? AND id != ?`, string(only), playerID); err != nil {
			return fmt.Errorf("insert post: %w", err)
		}
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("insert post: %w", err)
	}
	return recordChange(ctx, tx, ChangePost, 0, id, false, at)
}

// upsertIntel keeps the player's latest snapshot of target.
func upsertIntel(ctx context.Context, tx *sql.Tx, playerID int64, q *Player, tick int64, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO intel (player_id, target_id, cash, agents, security, secrets, ap,
		bid, trap, sweep_until, tick, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (player_id, target_id) DO UPDATE SET cash = excluded.cash, agents = excluded.agents,
		security = excluded.security, secrets = excluded.secrets, ap = excluded.ap, bid = excluded.bid,
		trap = excluded.trap, sweep_until = excluded.sweep_until, tick = excluded.tick, at = excluded.at`,
		playerID, q.ID, q.Cash, q.Agents, q.Security, q.Secrets, q.AP, q.Bid, q.Trap, q.SweepUntil, tick, unixNano(at))
	if err != nil {
		return fmt.Errorf("upsert intel: %w", err)
	}
	return nil
}

// insertNotes stores notes as events dated by at, and logs each as a
// change: a note for player 0 is a public news line, any other a line in
// that player's feed. actor is the player whose action wrote them (0: the
// game's own, a tick or a registration): a feed line for anyone else is
// an alert, something another player did to them; so is one marked Alert.
func insertNotes(ctx context.Context, tx *sql.Tx, actor int64, notes []Note, at func(tick int64) time.Time) error {
	for _, n := range notes {
		var player, from any // NULL unless set
		kind := ChangeNews
		if n.PlayerID != 0 {
			player, kind = n.PlayerID, ChangeFeed
		}
		if n.From != 0 {
			from = n.From
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO events (tick, at, player_id, public, text, from_id) VALUES (?, ?, ?, ?, ?, ?)`,
			n.Tick, unixNano(at(n.Tick)), player, n.PlayerID == 0, n.Text, from)
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		alert := kind == ChangeFeed && (n.Alert || actor != 0 && n.PlayerID != actor)
		if err := recordChange(ctx, tx, kind, n.PlayerID, id, alert, at(n.Tick)); err != nil {
			return err
		}
	}
	return nil
}
