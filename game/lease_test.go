package game_test

import (
	"context"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openSecond opens another Store on s's file with s's clock: another
// process on the same database.
func openSecond(t *testing.T, s *TestStore) *game.Store {
	t.Helper()
	other, err := game.Open(s.Path, s.Options)
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	return other
}

// TestLease: one holder at a time; renewing keeps it; a holder that stops
// renewing loses it at expiry to another; releasing hands it over at once.
func TestLease(t *testing.T) {
	ctx := context.Background()
	a := MustOpenStore(t)
	b := openSecond(t, a)
	const ttl = 3 * time.Second

	l, held, err := a.AcquireLease(ctx, game.TickLease, "worker-a", ttl)
	require.NoError(t, err)
	require.True(t, held)
	assert.Equal(t, game.Lease{Name: game.TickLease, Holder: "worker-a", Expires: Epoch.Add(ttl)}, l)

	l, held, err = b.AcquireLease(ctx, game.TickLease, "worker-b", ttl)
	require.NoError(t, err)
	assert.False(t, held, "a live lease is not taken")
	assert.Equal(t, "worker-a", l.Holder)

	a.Time.Add(2 * time.Second)
	l, held, err = a.AcquireLease(ctx, game.TickLease, "worker-a", ttl)
	require.NoError(t, err)
	require.True(t, held, "the holder renews")
	assert.Equal(t, Epoch.Add(2*time.Second+ttl), l.Expires)

	a.Time.Add(2 * time.Second) // 1 s before expiry
	_, held, err = b.AcquireLease(ctx, game.TickLease, "worker-b", ttl)
	require.NoError(t, err)
	assert.False(t, held, "renewed: not expired yet")

	a.Time.Add(time.Second) // worker-a died: its lease has run out
	l, held, err = b.AcquireLease(ctx, game.TickLease, "worker-b", ttl)
	require.NoError(t, err)
	require.True(t, held, "an expired lease goes to the next asker")
	assert.Equal(t, "worker-b", l.Holder)
	_, held, err = a.AcquireLease(ctx, game.TickLease, "worker-a", ttl)
	require.NoError(t, err)
	assert.False(t, held, "the old holder cannot renew a lease it lost")

	require.NoError(t, a.ReleaseLease(ctx, game.TickLease, "worker-a"), "releasing a lease one does not hold does nothing")
	l, err = a.LeaseOf(ctx, game.TickLease)
	require.NoError(t, err)
	assert.Equal(t, "worker-b", l.Holder)

	require.NoError(t, b.ReleaseLease(ctx, game.TickLease, "worker-b"))
	l, err = a.LeaseOf(ctx, game.TickLease)
	require.NoError(t, err)
	assert.Equal(t, "", l.Holder)
	_, held, err = a.AcquireLease(ctx, game.TickLease, "worker-a", ttl)
	require.NoError(t, err)
	assert.True(t, held, "a released lease is free at once")

	_, _, err = a.AcquireLease(ctx, game.TickLease, "worker-a", 0)
	assert.Error(t, err)
}

// TestTakeToken: a bucket shared by two stores on one file allows burst
// takes in all, then one per refill.
func TestTakeToken(t *testing.T) {
	ctx := context.Background()
	a := MustOpenStore(t)
	b := openSecond(t, a)
	const burst, refill = 3, 10 * time.Second
	now := Epoch
	for i, s := range []*game.Store{a.Store, b, a.Store} {
		wait, err := s.TakeToken(ctx, "203.0.113.7", now, burst, refill)
		require.NoError(t, err)
		assert.Zero(t, wait, "take %d", i+1)
	}
	wait, err := b.TakeToken(ctx, "203.0.113.7", now, burst, refill)
	require.NoError(t, err)
	assert.Equal(t, refill, wait, "the fourth take waits one refill, whichever store")
	wait, err = a.TakeToken(ctx, "198.51.100.1", now, burst, refill)
	require.NoError(t, err)
	assert.Zero(t, wait, "another client has its own bucket")

	wait, err = b.TakeToken(ctx, "203.0.113.7", now.Add(4*time.Second), burst, refill)
	require.NoError(t, err)
	assert.Equal(t, 6*time.Second, wait)
	wait, err = a.TakeToken(ctx, "203.0.113.7", now.Add(refill), burst, refill)
	require.NoError(t, err)
	assert.Zero(t, wait, "one token back after one refill")

	// Long after, every bucket is full again and its row is gone.
	_, err = a.TakeToken(ctx, "192.0.2.1", now.Add(time.Hour), burst, refill)
	require.NoError(t, err)
	assert.Equal(t, 1, MustCount(t, a, `SELECT count(*) FROM rate_buckets`), "only the client just counted is kept")
}
