package game_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestBackoff_Delay(t *testing.T) {
	// Ensure no delay until Free failures, then First doubling, at most Max.
	b := game.Backoff{Free: 3, First: time.Second, Max: 10 * time.Second}
	for failures, want := range []time.Duration{0, 0, 0, 1, 2, 4, 8, 10, 10} {
		assert.Equal(t, want*time.Second, b.Delay(failures), "%d failures", failures)
	}
	assert.Equal(t, 10*time.Second, b.Delay(1000), "no overflow")
}

func TestStore_LoginWait(t *testing.T) {
	ctx := context.Background()
	a := MustOpenStore(t)
	b := openSecond(t, a) // another process on the same database
	p := MustRegister(t, a, "skinner", game.FBI)
	now := Epoch
	stranger := func(i int) game.LoginAttempt {
		return game.LoginAttempt{Name: "Skinner", Clients: []string{fmt.Sprintf("addr 192.0.2.%d", i)}}
	}
	owner := game.LoginAttempt{Name: "skinner", Clients: []string{"device 00ff", "addr 203.0.113.7"}}
	require.NoError(t, a.LoginSucceeded(ctx, p.ID, owner, now))

	t.Run("SharedAcrossStores", func(t *testing.T) {
		// Ensure failures counted by either store add up for the account,
		// whatever the client and the case of the name, and the wait
		// counts from the last failure.
		for i := range game.AccountBackoff.Free {
			s := []*game.Store{a.Store, b}[i%2]
			wait, known, err := s.LoginWait(ctx, stranger(i), now)
			require.NoError(t, err)
			require.Zero(t, wait, "failure %d", i+1)
			require.False(t, known)
			require.NoError(t, s.LoginFailed(ctx, stranger(i), known, now))
		}
		wait, _, err := b.LoginWait(ctx, stranger(99), now.Add(300*time.Millisecond))
		require.NoError(t, err)
		assert.Equal(t, 700*time.Millisecond, wait)
	})

	t.Run("KnownClients", func(t *testing.T) {
		// Ensure the owner's device, or its address with another device,
		// is known and not held back; its own failures count for it only.
		for _, c := range [][]string{{"device 00ff", "addr 198.51.100.1"}, {"device 1234", "addr 203.0.113.7"}} {
			wait, known, err := a.LoginWait(ctx, game.LoginAttempt{Name: "skinner", Clients: c}, now)
			require.NoError(t, err)
			assert.True(t, known, c)
			assert.Zero(t, wait, c)
		}
		for range game.ClientBackoff.Free {
			require.NoError(t, b.LoginFailed(ctx, owner, true, now))
		}
		wait, known, err := a.LoginWait(ctx, owner, now)
		require.NoError(t, err)
		assert.True(t, known)
		assert.Equal(t, game.ClientBackoff.First, wait)
		wait, _, err = a.LoginWait(ctx, stranger(98), now)
		require.NoError(t, err)
		assert.Equal(t, game.AccountBackoff.First, wait, "a known client's failures do not count for the account")

		require.NoError(t, a.LoginSucceeded(ctx, p.ID, owner, now))
		wait, _, err = b.LoginWait(ctx, owner, now)
		require.NoError(t, err)
		assert.Zero(t, wait, "a login forgets the client's failures")
		wait, _, err = b.LoginWait(ctx, stranger(98), now)
		require.NoError(t, err)
		assert.Equal(t, game.AccountBackoff.First, wait, "but not the account's")
	})

	t.Run("Forget", func(t *testing.T) {
		// Ensure failures are forgotten AccountBackoff.Forget after the
		// last one: the next failure counts from 1, and old rows go.
		later := now.Add(game.AccountBackoff.Forget)
		wait, _, err := a.LoginWait(ctx, stranger(97), later)
		require.NoError(t, err)
		assert.Zero(t, wait)
		require.NoError(t, a.LoginFailed(ctx, stranger(97), false, later))
		wait, _, err = a.LoginWait(ctx, stranger(97), later)
		require.NoError(t, err)
		assert.Zero(t, wait, "one failure: free again")
		assert.Equal(t, 2, MustCount(t, a, `SELECT count(*) FROM login_failures`), "only the two keys just counted are kept")
	})

	t.Run("UnknownName", func(t *testing.T) {
		// Ensure failures for a name nobody has are not counted, and
		// write nothing: a storm of them must not empty every player's
		// read cache at each failure.
		later := now.Add(2 * game.AccountBackoff.Forget)
		nobody := game.LoginAttempt{Name: "nobody", Clients: []string{"addr 192.0.2.1"}}
		version := b.Version()
		for range game.AccountBackoff.Free + 1 {
			require.NoError(t, b.LoginFailed(ctx, nobody, false, later))
		}
		assert.Equal(t, version, b.Version(), "no write")
		wait, known, err := a.LoginWait(ctx, nobody, later)
		require.NoError(t, err)
		assert.Zero(t, wait)
		assert.False(t, known)
		assert.Zero(t, MustCount(t, a, `SELECT count(*) FROM login_failures WHERE key LIKE '%nobody%'`))
	})

	t.Run("ErrNoClient", func(t *testing.T) {
		// Ensure an attempt without a client is an error, not a pass.
		_, _, err := a.LoginWait(ctx, game.LoginAttempt{Name: "skinner"}, now)
		assert.Error(t, err)
	})
}
