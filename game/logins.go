package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The throttle on failed logins, after OWASP's Authentication Cheat Sheet
// ("Login Throttling", "Account Lockout"): the count of failures belongs
// to the account, not to the address, so that guesses from many addresses
// add up; the delay after them is exponential, a second at first and
// doubling with each failure up to a cap, rather than a lock-out; and it
// must not let an attacker lock the owner out. So, as OWASP's "Slow Down
// Online Guessing Attacks with Device Cookies" proposes, the clients an
// account has logged in from before (its owner's browser, by a cookie, or
// address) are kept apart: failures from clients the account does not
// know count against the account (AccountBackoff), and each client's
// failures against that client (ClientBackoff). An attempt from a known
// client waits only for its own back-off, whatever strangers did; one
// from an unknown client waits for both. The owner on a new browser at a
// new address is the one left waiting, at most AccountBackoff.Max.
//
// The counts live in the store (login_failures), so every process serving
// the database counts together. Only names someone has are counted: there
// is nothing to guess behind the others, and the names are public anyway
// (the ranking lists every agent), so the throttle's answers reveal
// nothing; a spray of unknown names is bounded by the per-address limit
// and the fair queue of the server, and the table by the accounts.

// A Backoff is the delay an attempt waits after failed ones: none until
// Free failures, then First after the last one, doubling with each further
// failure, at most Max. Failures are forgotten Forget after the last one.
type Backoff struct {
	Free   int
	First  time.Duration
	Max    time.Duration
	Forget time.Duration
}

// The two back-offs of the throttle. AccountBackoff: 10 failures from
// strangers pass, then the next attempt waits 1 s, the one after 2 s,
// 4 s, ... up to 15 minutes (as AWS Cognito's lockout, which OWASP's
// testing guide cites): about 20 guesses in the first hour, then 4 an
// hour. ClientBackoff: 5 failures, then 1 s doubling up to 5 minutes.
var (
	AccountBackoff = Backoff{Free: 10, First: time.Second, Max: 15 * time.Minute, Forget: time.Hour}
	ClientBackoff  = Backoff{Free: 5, First: time.Second, Max: 5 * time.Minute, Forget: time.Hour}
)

// KnownClientTTL is how long a client a player logged in from stays known.
const KnownClientTTL = 90 * 24 * time.Hour

// maxKnownClients bounds the clients kept per player: the oldest go first.
const maxKnownClients = 16

// Delay is how long after the last of failures an attempt waits.
func (b Backoff) Delay(failures int) time.Duration {
	n := failures - b.Free + 1
	if n <= 0 {
		return 0
	}
	d := b.First
	for ; n > 1 && d < b.Max; n-- {
		d *= 2
	}
	return min(d, b.Max)
}

// A LoginAttempt is who tries to log in, as whom. Clients name the client
// as the server knows it, most specific first: a device cookie's id, then
// the address. The first is the one whose own failures count (ClientBackoff);
// the attempt is from a known client if any of them is known.
type LoginAttempt struct {
	Name    string
	Clients []string
}

func (a LoginAttempt) accountKey() string { return "name " + strings.ToLower(a.Name) }
func (a LoginAttempt) clientKey() string {
	return "client " + strings.ToLower(a.Name) + " " + a.Clients[0]
}

// LoginWait returns how long the attempt must wait, at now, for the
// throttle (0: it may go ahead), and whether it comes from a client the
// account knows. Two short queries, no write.
func (s *Store) LoginWait(ctx context.Context, a LoginAttempt, now time.Time) (wait time.Duration, known bool, err error) {
	if len(a.Clients) == 0 {
		return 0, false, errors.New("game: login wait: no client")
	}
	known, err = s.knownClient(ctx, a, now)
	if err != nil {
		return 0, false, err
	}
	wait, err = s.backoffWait(ctx, a.clientKey(), ClientBackoff, now)
	if err != nil || known {
		return wait, known, err
	}
	aw, err := s.backoffWait(ctx, a.accountKey(), AccountBackoff, now)
	return max(wait, aw), known, err
}

// knownClient reports whether a player called a.Name logged in from one of
// a.Clients within KnownClientTTL.
func (s *Store) knownClient(ctx context.Context, a LoginAttempt, now time.Time) (bool, error) {
	args := []any{a.Name, unixNano(now.Add(-KnownClientTTL))}
	for _, c := range a.Clients {
		args = append(args, c)
	}
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM login_clients c JOIN players p ON p.id = c.player_id
		WHERE p.name = ? AND c.seen_at > ? AND c.client IN (?`+strings.Repeat(", ?", len(a.Clients)-1)+`)`, args...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("game: login wait: %w", err)
	}
	return n > 0, nil
}

// backoffWait is how long after now key's failures make an attempt wait.
func (s *Store) backoffWait(ctx context.Context, key string, b Backoff, now time.Time) (time.Duration, error) {
	var failures int
	var last int64
	err := s.db.QueryRowContext(ctx, `SELECT failures, last_at FROM login_failures WHERE key = ?`, key).Scan(&failures, &last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("game: login wait: %w", err)
	}
	since := now.Sub(fromNano(last))
	if since >= b.Forget {
		return 0, nil
	}
	return max(b.Delay(failures)-since, 0), nil
}

// LoginFailed counts a failed attempt at now, if someone has its name:
// against its client, and against the account unless known (as LoginWait
// reported). It also deletes up to 16 counts forgotten by now, so the
// table holds only the recent ones. One short write transaction; none for
// a name nobody has (one read), so that a storm of those writes nothing.
// It touches nothing cached.
func (s *Store) LoginFailed(ctx context.Context, a LoginAttempt, known bool, now time.Time) error {
	if len(a.Clients) == 0 {
		return errors.New("game: login failed: no client")
	}
	var n int
	if err := s.prepared(ctx, nil, `SELECT count(*) FROM players WHERE name = ?`).QueryRowContext(ctx, a.Name).Scan(&n); err != nil {
		return wrap("login failed", err)
	} else if n == 0 {
		return nil
	}
	keys := []string{a.clientKey()}
	if !known {
		keys = append(keys, a.accountKey())
	}
	err := s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		forget := unixNano(now.Add(-max(AccountBackoff.Forget, ClientBackoff.Forget)))
		for _, k := range keys {
			// A count whose last failure is forgotten starts again at 1.
			if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures (key, failures, last_at) VALUES (?1, 1, ?2)
				ON CONFLICT (key) DO UPDATE SET failures = CASE WHEN last_at <= ?3 THEN 1 ELSE failures + 1 END, last_at = ?2`,
				k, unixNano(now), forget); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE key IN
			(SELECT key FROM login_failures WHERE last_at <= ? LIMIT 16)`, forget)
		return err
	})
	return wrap("login failed", err)
}

// LoginSucceeded records that player logged in by the attempt at now: its
// client's failures are forgotten, and its clients become known (the
// account's count is left: an owner's login does not give strangers their
// free guesses back). One short write transaction.
func (s *Store) LoginSucceeded(ctx context.Context, playerID int64, a LoginAttempt, now time.Time) error {
	if len(a.Clients) == 0 {
		return errors.New("game: login succeeded: no client")
	}
	err := s.updateTouching(ctx, nothingCached(), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE key = ?`, a.clientKey()); err != nil {
			return err
		}
		for _, c := range a.Clients {
			if _, err := tx.ExecContext(ctx, `INSERT INTO login_clients (player_id, client, seen_at) VALUES (?, ?, ?)
				ON CONFLICT (player_id, client) DO UPDATE SET seen_at = excluded.seen_at`, playerID, c, unixNano(now)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM login_clients WHERE player_id = ?1 AND client NOT IN
			(SELECT client FROM login_clients WHERE player_id = ?1 ORDER BY seen_at DESC LIMIT ?2)`, playerID, maxKnownClients)
		return err
	})
	return wrap("login succeeded", err)
}
