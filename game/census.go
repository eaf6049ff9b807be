package game

import (
	"context"
)

// Census is a head count of the game, for a host's monitoring.
type Census struct {
	Players  int   // registered players
	Sessions int   // sessions not yet expired
	Tick     int64 // the clock's tick
	Round    int   // the current round, from 1
}

// Census counts the game's players and live sessions and reads the clock,
// in one statement.
func (s *Store) Census(ctx context.Context) (Census, error) {
	var c Census
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM players),
		(SELECT count(*) FROM sessions WHERE expires_at > ?),
		(SELECT value FROM kv WHERE key = 'tick'), (SELECT value FROM kv WHERE key = 'round')`,
		unixNano(s.now())).Scan(&c.Players, &c.Sessions, &c.Tick, &c.Round)
	return c, wrap("census", err)
}
