package game

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ChangeKind says what a Change is about. Each is the name of an event on
// the game's live event stream.
type ChangeKind string

// The kinds of Change, and what each carries.
const (
	ChangeFeed   ChangeKind = "feed"   // a new line in one player's feed: Event
	ChangeNews   ChangeKind = "news"   // a new news line: Event
	ChangePost   ChangeKind = "post"   // a new board post: Post (FactionOnly: for its author's faction only)
	ChangeTick   ChangeKind = "tick"   // the clock moved on (one change however many ticks were applied): Clock
	ChangeSource ChangeKind = "source" // a source's price, stock or state changed: Source
	// ChangePlayer: a player's standing as everyone sees it changed (they
	// enlisted; an action moved their Secrets, cash or protection from
	// theft): Player, of which only the public fields (ID, Name, Faction,
	// Secrets, Cash, ProtectedUntil) may be shown to others. What a tick
	// changes (every player's pay, a round's reset) is not logged so: it
	// would be a message per player to every stream, N squared a payday;
	// a page showing standings reloads them at a tick instead.
	ChangePlayer ChangeKind = "player"
)

// DefaultKeepChanges is how many of the newest changes each applied tick
// keeps when Options.KeepChanges is 0: about a day of a busy 20-player
// game. A page that reconnects after more than that many changes have
// happened has missed some and must reload (ChangesSince's missed).
const DefaultKeepChanges = 5000

// A Change is one thing that happened in the game that an open page may
// show without a reload: written in the same transaction as the write that
// caused it, so every process on the database sees it, in order.
type Change struct {
	ID       int64 // increasing, never reused: the stream's cursor (an SSE id)
	Kind     ChangeKind
	PlayerID int64 // whose it is: 0 for every player's, else only that player's (a feed line)
	Alert    bool  // a feed line about something another player did to this one (a theft, a spy caught)
	At       time.Time

	// Gone reports that the row the change refers to was pruned since (a
	// feed line past KeepFeed): there is nothing to show, but the change
	// still counts for the cursor.
	Gone bool

	// The payload, by Kind: exactly one is set, as it is when read (a source
	// changed twice shows its latest state both times); a Gone change's
	// holds only its row's id.
	Event  *Event  // feed, news
	Post   *Post   // post
	Clock  *Clock  // tick
	Source *Source // source
	Player *Player // player
}

// LastChange returns the id of the newest change, 0 if there is none: where
// a new stream starts reading from.
func (s *Store) LastChange(ctx context.Context) (int64, error) {
	var id int64
	err := s.prepared(ctx, nil, `SELECT coalesce(max(id), 0) FROM changes`).QueryRowContext(ctx).Scan(&id)
	return id, wrap("last change", err)
}

// ChangesSince returns up to limit changes with ids above after, oldest
// first. missed reports that some changes after it were pruned already
// (Options.KeepChanges): the caller cannot catch up and should start afresh from
// LastChange. A change whose row was pruned since (a feed line past
// KeepFeed) comes back Gone, so that a caller's cursor moves past it.
func (s *Store) ChangesSince(ctx context.Context, after int64, limit int) (changes []Change, missed bool, err error) {
	return s.changes(ctx, after, limit, 0)
}

// ChangesFor is ChangesSince for one player's stream: only the changes
// for every player and those of playerID (its feed), so a catch-up reads
// no other player's lines.
func (s *Store) ChangesFor(ctx context.Context, playerID, after int64, limit int) (changes []Change, missed bool, err error) {
	return s.changes(ctx, after, limit, playerID)
}

// changes reads the changes after after, all of them (player 0) or those
// for everyone and for player.
func (s *Store) changes(ctx context.Context, after int64, limit int, player int64) (changes []Change, missed bool, err error) {
	if after > 0 {
		var oldest int64
		if err := s.prepared(ctx, nil, `SELECT coalesce(min(id), 0) FROM changes`).QueryRowContext(ctx).Scan(&oldest); err != nil {
			return nil, false, wrap("changes", err)
		}
		missed = oldest > after+1
	}
	rows, err := s.prepared(ctx, nil, `SELECT id, kind, coalesce(player_id, 0), alert, ref, at FROM changes
		WHERE id > ?1 AND (?2 = 0 OR player_id IS NULL OR player_id = ?2) ORDER BY id LIMIT ?3`).QueryContext(ctx, after, player, limit)
	heads, err := collect(rows, err, scanChangeHead)
	if err != nil {
		return nil, false, wrap("changes", err)
	}
	if err := s.loadPayloads(ctx, heads); err != nil {
		return nil, false, wrap("changes", err)
	}
	return heads, missed, nil
}

// scanChangeHead scans a changes row: a Change whose payload holds only the
// row's ref until loadPayloads.
func scanChangeHead(row scanner) (*Change, error) {
	var c Change
	var ref, at int64
	if err := row.Scan(&c.ID, &c.Kind, &c.PlayerID, &c.Alert, &ref, &at); err != nil {
		return nil, err
	}
	c.At = fromNano(at)
	// Until loadPayloads, the ref rides in the payload slot of its kind.
	switch c.Kind {
	case ChangeFeed, ChangeNews:
		c.Event = &Event{ID: ref}
	case ChangePost:
		c.Post = &Post{ID: ref}
	case ChangeTick:
		c.Clock = &Clock{Tick: ref}
	case ChangeSource:
		c.Source = &Source{ID: ref}
	case ChangePlayer:
		c.Player = &Player{ID: ref}
	default:
		return nil, fmt.Errorf("change %d: unknown kind %q", c.ID, c.Kind)
	}
	return &c, nil
}

// recordStanding logs a ChangePlayer for each of players whose standing
// as everyone sees it (Secrets, protection) differs from before's
// player of the same index; before nil: all of them (they are new).
func recordStanding(ctx context.Context, tx *sql.Tx, before, players []Player, at time.Time) error {
	for i := range players {
		p := &players[i]
		if before != nil && standing(&before[i]) == standing(p) {
			continue
		}
		if err := recordChange(ctx, tx, ChangePlayer, 0, p.ID, false, at); err != nil {
			return err
		}
	}
	return nil
}

// recordSecrets logs a ChangePlayer for each of players whose Secrets
// differ from before's player of the same index: a tick's, which changes
// Secrets only at the broker's auction (protections run out on the
// clock, which every page keeps).
func recordSecrets(ctx context.Context, tx *sql.Tx, before, players []Player, at time.Time) error {
	for i := range players {
		if players[i].Secrets == before[i].Secrets {
			continue
		}
		if err := recordChange(ctx, tx, ChangePlayer, 0, players[i].ID, false, at); err != nil {
			return err
		}
	}
	return nil
}

// standing is what the ranking shows of a player that can change: never
// their cash, so a change of cash alone tells nobody else anything.
func standing(p *Player) [2]int64 {
	return [2]int64{int64(p.Secrets), p.ProtectedUntil}
}

// recordChange logs a change in tx (playerID 0: everyone's).
func recordChange(ctx context.Context, tx *sql.Tx, kind ChangeKind, playerID, ref int64, alert bool, at time.Time) error {
	var player any
	if playerID != 0 {
		player = playerID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO changes (kind, player_id, alert, ref, at) VALUES (?, ?, ?, ?, ?)`,
		kind, player, alert, ref, unixNano(at)); err != nil {
		return fmt.Errorf("record %s change: %w", kind, err)
	}
	return nil
}
