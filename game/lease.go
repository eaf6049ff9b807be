package game

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TickLease is the name of the lease whose holder schedules the game's
// ticks when several processes serve one database.
const TickLease = "tick"

// A Lease is a named right held by one holder at a time, until Expires
// unless its holder renews it first. Leases let several processes on one
// database agree which of them does a job (schedules the ticks) without
// talking to each other: a holder that dies stops renewing, and once its
// lease expires another process takes it.
type Lease struct {
	Name    string
	Holder  string    // who holds it (AcquireLease's holder), "" if nobody ever has
	Expires time.Time // on the store's clock (Options.Now)
}

// Held reports whether holder holds l at now.
func (l Lease) Held(holder string, now time.Time) bool {
	return l.Holder == holder && l.Expires.After(now)
}

// AcquireLease takes the lease name for holder, or renews it if holder has
// it, until ttl from now (Options.Now). It returns the lease as it stands
// afterwards and whether holder holds it: false when another holder's lease
// has not expired yet, which is no error. A holder should renew well before
// ttl runs out (every ttl/3, say), and every holder name must be unique
// among the processes using the database (host, process id and a start
// time, for example). ttl must be positive.
//
// Checking costs one query; taking or renewing adds a short write
// transaction, so a process that sees another's live lease does not write.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, bool, error) {
	if ttl <= 0 || holder == "" {
		return Lease{}, false, errors.New("game: acquire lease: need a holder and a positive ttl")
	}
	now := s.now()
	l, err := s.lease(ctx, s.db, name)
	if err != nil {
		return Lease{}, false, err
	}
	if l.Holder != holder && l.Expires.After(now) {
		return l, false, nil
	}
	err = s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		// Checked again inside the write lock: another process may have
		// taken it between the read and BEGIN IMMEDIATE.
		if _, err := tx.ExecContext(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES (?1, ?2, ?3)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			WHERE leases.holder = excluded.holder OR leases.expires_at <= ?4`,
			name, holder, unixNano(now.Add(ttl)), unixNano(now)); err != nil {
			return err
		}
		l, err = s.lease(ctx, tx, name)
		return err
	})
	if err != nil {
		return Lease{}, false, wrap("acquire lease", err)
	}
	return l, l.Held(holder, now), nil
}

// ReleaseLease gives up the lease name if holder holds it, so another
// process can take it at once rather than after it expires; otherwise it
// does nothing.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	return wrap("release lease", s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder)
		return err
	}))
}

// LeaseOf returns the lease name as stored: a zero Lease (no Holder) if
// nobody has taken it or it was released.
func (s *Store) LeaseOf(ctx context.Context, name string) (Lease, error) {
	return s.lease(ctx, s.db, name)
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) lease(ctx context.Context, q queryRower, name string) (Lease, error) {
	l := Lease{Name: name}
	var expires int64
	err := q.QueryRowContext(ctx, `SELECT holder, expires_at FROM leases WHERE name = ?`, name).Scan(&l.Holder, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return l, nil
	}
	if err != nil {
		return Lease{}, wrap("lease", err)
	}
	l.Expires = fromNano(expires)
	return l, nil
}
