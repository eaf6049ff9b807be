package game

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// DigestLines is how many of the lines on a player's wire since the last
// visit a digest lists.
const DigestLines = 10

// Digest is "while you were away": what happened since the player last
// visited headquarters, at least a tick ago.
type Digest struct {
	Since int64   // the tick of the last visit
	Ticks int64   // ticks since
	Lines []Event // the player's wire since, newest first, DigestLines at most
	More  int     // lines past those
	News  int     // news lines since
	Posts int     // board posts the player may read since, by others
	// Unread is the private messages not read yet (Player.UnreadMessages).
	Unread int
}

// Empty reports whether nothing happened since the last visit: no wire
// line, news, post or unread message (HQ then shows no digest).
func (g *Digest) Empty() bool { return len(g.Lines)+g.More+g.News+g.Posts+g.Unread == 0 }

// Visit records that the player is looking at headquarters at clock's
// tick and returns the digest of what happened since the previous visit:
// nil on the first visit, and on one within the same tick (nothing is
// written then, so a page reloaded while the game stands still reads the
// same). Errors: ENOTFOUND for no such player.
func (s *Store) Visit(ctx context.Context, p *Player, clock Clock) (*Digest, error) {
	s.seenMu.Lock()
	known, ok := s.seen[p.ID]
	s.seenMu.Unlock()
	if ok && known >= clock.Tick {
		return nil, nil // recorded here this tick already: no query
	}
	var since int64
	err := s.prepared(ctx, nil, `SELECT seen_tick FROM players WHERE id = ?`).QueryRowContext(ctx, p.ID).Scan(&since)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "There is no player #%d.", p.ID)
	} else if err != nil {
		return nil, wrap("visit", err)
	}
	if since >= clock.Tick {
		s.remember(p.ID, since)
		return nil, nil
	}
	var d *Digest
	if since >= 0 {
		d = &Digest{Since: since, Ticks: clock.Tick - since, Unread: p.UnreadMessages}
		rows, err := s.prepared(ctx, nil, `SELECT `+eventColumns+` FROM events WHERE player_id = ? AND tick > ?
			ORDER BY id DESC LIMIT ?`).QueryContext(ctx, p.ID, since, DigestLines)
		if d.Lines, err = scanEvents(rows, err); err != nil {
			return nil, wrap("visit", err)
		}
		var lines int
		if err := s.prepared(ctx, nil, `SELECT
			(SELECT count(*) FROM events WHERE player_id = ?1 AND tick > ?2),
			(SELECT count(*) FROM events WHERE public = 1 AND tick > ?2),
			(SELECT count(*) FROM posts WHERE player_id != ?1 AND at > ?3 AND (faction IS NULL OR faction = ?4))`).QueryRowContext(ctx,
			p.ID, since, unixNano(tickTimeOf(clock, since)), string(p.Faction)).Scan(&lines, &d.News, &d.Posts); err != nil {
			return nil, wrap("visit", err)
		}
		d.More = lines - len(d.Lines)
	}
	// One statement, a transaction of its own. It leaves Version alone:
	// seen_tick is read by Visit alone, never through the read cache nor
	// the change log, so no cached page goes stale (each write emptied
	// the cache, and under make capacity's players a visit was about half
	// the writes).
	_, err = s.prepared(ctx, nil, `UPDATE players SET seen_tick = ? WHERE id = ?`).ExecContext(ctx, clock.Tick, p.ID)
	if err == nil {
		s.remember(p.ID, clock.Tick)
	}
	return d, wrap("visit", err)
}

// remember notes that player id's seen_tick is at least tick (see Store.seen).
func (s *Store) remember(id, tick int64) {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	if s.seen == nil {
		s.seen = map[int64]int64{}
	}
	s.seen[id] = max(s.seen[id], tick)
}

// tickTimeOf returns when tick was (or is) due on clock c.
func tickTimeOf(c Clock, tick int64) time.Time {
	return c.LastTick.Add(time.Duration(tick-c.Tick) * c.Interval)
}
