package game

import (
	"context"
	"strconv"
	"strings"
)

// Reads for many live streams at once: a server holding thousands of open
// pages asks for their players' figures, their sessions and the payloads
// of a run of changes in one query each, not one per stream or change.
// Each passes its ids as one JSON array parameter (SQLite's json_each), so
// the statement is the same however many there are.

// PlayersByID returns the players with these ids, by id; an id without a
// player (the account is gone) is left out. Repeated ids are read once.
func (s *Store) PlayersByID(ctx context.Context, ids []int64) (map[int64]*Player, error) {
	found := make(map[int64]*Player, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	rows, err := s.prepared(ctx, nil, `SELECT `+playerColumns+` FROM players p
		WHERE p.id IN (SELECT value FROM json_each(?))`).QueryContext(ctx, intsJSON(ids))
	players, err := collect(rows, err, func(r scanner) (*Player, error) { return scanPlayer(r) })
	if err != nil {
		return nil, wrap("players by id", err)
	}
	for i := range players {
		found[players[i].ID] = &players[i]
	}
	return found, nil
}

// SessionOwners returns, for each of the session ids that is valid now
// (it exists and has not expired by Options.Now), the id of its player.
// An invalid, unknown or expired id is left out.
func (s *Store) SessionOwners(ctx context.Context, ids []string) (map[string]int64, error) {
	owners := make(map[string]int64, len(ids))
	var b strings.Builder
	b.WriteByte('[')
	for _, id := range ids {
		if !ValidSessionID(id) { // 32 hex digits: nothing to quote
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + id + `"`)
	}
	b.WriteByte(']')
	if b.Len() == 2 {
		return owners, nil
	}
	rows, err := s.prepared(ctx, nil, `SELECT id, player_id FROM sessions
		WHERE id IN (SELECT value FROM json_each(?1)) AND expires_at > ?2`).QueryContext(ctx, b.String(), unixNano(s.now()))
	if err != nil {
		return nil, wrap("session owners", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var player int64
		if err := rows.Scan(&id, &player); err != nil {
			return nil, wrap("session owners", err)
		}
		owners[id] = player
	}
	return owners, wrap("session owners", rows.Err())
}

// intsJSON is ids as a JSON array.
func intsJSON(ids []int64) string {
	b := make([]byte, 0, 2+len(ids)*8)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// loadPayloads reads the rows heads refer to, one query per kind of row
// (events, posts, sources, players; the clock once), and marks Gone the
// heads whose row is gone.
func (s *Store) loadPayloads(ctx context.Context, heads []Change) error {
	var events, posts, sources, players []int64
	tick := false
	for i := range heads {
		switch c := &heads[i]; c.Kind {
		case ChangeFeed, ChangeNews:
			events = append(events, c.Event.ID)
		case ChangePost:
			posts = append(posts, c.Post.ID)
		case ChangeSource:
			sources = append(sources, c.Source.ID)
		case ChangePlayer:
			players = append(players, c.Player.ID)
		case ChangeTick:
			tick = true
		}
	}
	var p payloads
	var err error
	if p.events, err = byID(ctx, s, `SELECT `+eventColumns+` FROM events WHERE id IN (SELECT value FROM json_each(?))`,
		events, scanEvent); err != nil {
		return err
	}
	if p.posts, err = byID(ctx, s, `SELECT o.id, p.name, p.faction, o.faction IS NOT NULL, o.body, o.at
		FROM posts o JOIN players p ON p.id = o.player_id WHERE o.id IN (SELECT value FROM json_each(?))`,
		posts, scanPost); err != nil {
		return err
	}
	if p.sources, err = byID(ctx, s, `SELECT `+sourceColumns+` FROM sources WHERE id IN (SELECT value FROM json_each(?))`,
		sources, scanSource); err != nil {
		return err
	}
	if p.players, err = s.PlayersByID(ctx, players); err != nil {
		return err
	}
	if tick {
		if p.clock, err = s.Clock(ctx); err != nil {
			return err
		}
	}
	p.fill(heads)
	return nil
}

// payloads are the rows loadPayloads read for a batch of changes, by id,
// and the clock.
type payloads struct {
	events  map[int64]*Event
	posts   map[int64]*Post
	sources map[int64]*Source
	players map[int64]*Player
	clock   Clock
}

// fill sets each of heads' payload to its row read, or marks it Gone; a
// tick change gets the clock, at the later of its tick and the clock's.
func (p *payloads) fill(heads []Change) {
	for i := range heads {
		c := &heads[i]
		switch c.Kind {
		case ChangeFeed, ChangeNews:
			c.Event, c.Gone = pick(p.events, c.Event)
		case ChangePost:
			c.Post, c.Gone = pick(p.posts, c.Post)
		case ChangeSource:
			c.Source, c.Gone = pick(p.sources, c.Source)
		case ChangePlayer:
			c.Player, c.Gone = pick(p.players, c.Player)
		case ChangeTick:
			k := p.clock
			k.Tick = max(p.clock.Tick, c.Clock.Tick)
			c.Clock = &k
		}
	}
}

// byID runs query with ids as its one parameter and returns the rows
// scanned, by id.
func byID[T any, P rowPtr[T]](ctx context.Context, s *Store, query string, ids []int64, scan func(scanner) (*T, error)) (map[int64]*T, error) {
	found := make(map[int64]*T, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	rows, err := s.prepared(ctx, nil, query).QueryContext(ctx, intsJSON(ids))
	all, err := collect(rows, err, scan)
	if err != nil {
		return nil, err
	}
	for i := range all {
		found[P(&all[i]).rowID()] = &all[i]
	}
	return found, nil
}

// pick returns the row placeholder's id stands for, or the placeholder
// and true (gone) if there is none.
func pick[T any, P rowPtr[T]](found map[int64]*T, placeholder P) (*T, bool) {
	if row, ok := found[placeholder.rowID()]; ok {
		return row, false
	}
	return placeholder, true
}

// rowPtr is a pointer to a row with an id.
type rowPtr[T any] interface {
	*T
	rowID() int64
}

func (e *Event) rowID() int64  { return e.ID }
func (o *Post) rowID() int64   { return o.ID }
func (o *Source) rowID() int64 { return o.ID }
func (p *Player) rowID() int64 { return p.ID }
