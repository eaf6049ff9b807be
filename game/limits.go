package game

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TakeToken takes one token at now from the token bucket key, shared by
// every process on the database: a bucket of burst tokens, refilled by one
// every refill. It returns 0 when there was a token, else how long until
// there is one (always > 0), taking nothing. A bucket is kept as the time
// it is full again (GCRA), in one row; a full bucket is no row.
//
// Each call is one short write transaction, which also deletes up to 16
// buckets full by now, so the table holds only clients owed tokens. burst
// and refill must be positive.
func (s *Store) TakeToken(ctx context.Context, key string, now time.Time, burst int, refill time.Duration) (time.Duration, error) {
	if burst <= 0 || refill <= 0 {
		return 0, errors.New("game: take token: burst and refill must be positive")
	}
	var wait time.Duration
	err := s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		full := now
		var at int64
		switch err := tx.QueryRowContext(ctx, `SELECT full_at FROM rate_buckets WHERE key = ?`, key).Scan(&at); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if t := fromNano(at); t.After(now) {
				full = t
			}
		}
		next := full.Add(refill)
		if over := next.Sub(now) - time.Duration(burst)*refill; over > 0 {
			wait = over
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO rate_buckets (key, full_at) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET full_at = excluded.full_at`, key, unixNano(next)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM rate_buckets WHERE key IN
			(SELECT key FROM rate_buckets WHERE full_at <= ? LIMIT 16)`, unixNano(now))
		return err
	})
	return wait, wrap("take token", err)
}
