package handlers

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestLimiter_Allow(t *testing.T) {
	t.Run("Bucket", func(t *testing.T) {
		// Ensure burst attempts pass at once, the next waits one refill,
		// tokens come back one per refill up to burst, and a refused attempt
		// takes nothing.
		l := newLimiter(3, 10*time.Second, 100)
		for i := range 3 {
			require.Zero(t, l.allow("a", epoch), "attempt %d", i+1)
		}
		assert.Equal(t, 10*time.Second, l.allow("a", epoch))
		assert.Equal(t, 4*time.Second, l.allow("a", epoch.Add(6*time.Second)))
		assert.Zero(t, l.allow("a", epoch.Add(10*time.Second)))
		assert.Equal(t, 10*time.Second, l.allow("a", epoch.Add(10*time.Second)))
		later := epoch.Add(time.Hour)
		for range 3 {
			require.Zero(t, l.allow("a", later), "a full bucket holds burst, no more")
		}
		assert.Positive(t, l.allow("a", later))
	})

	t.Run("Bounded", func(t *testing.T) {
		// Ensure the map never holds more than max clients however many
		// come, forgetting full buckets first, and keeps limiting the ones
		// it remembers.
		const max = 50
		l := newLimiter(2, time.Minute, max)
		now := epoch
		for i := range 10 * max {
			now = now.Add(time.Second)
			require.Zero(t, l.allow(fmt.Sprint("client", i), now))
			require.LessOrEqual(t, len(l.buckets), max, "after client %d", i)
		}
		last := fmt.Sprint("client", 10*max-1)
		require.Zero(t, l.allow(last, now))
		assert.Positive(t, l.allow(last, now), "the newest client is remembered")

		now = now.Add(time.Hour)
		require.Zero(t, l.allow("late", now))
		assert.Len(t, l.buckets, 1, "full buckets are forgotten when a new client comes")
	})

	t.Run("FullForgetsLeastRecent", func(t *testing.T) {
		// Ensure that at max, every client owing tokens, a new client
		// makes the limiter forget the one that took a token least
		// recently, and the others stay limited.
		l := newLimiter(1, time.Minute, 3)
		for _, k := range []string{"a", "b", "c"} {
			require.Zero(t, l.allow(k, epoch))
		}
		assert.Positive(t, l.allow("a", epoch), "a refused: it stays where it was")
		require.Zero(t, l.allow("d", epoch))
		assert.Len(t, l.buckets, 3)
		assert.Zero(t, l.allow("a", epoch), "a, the least recent, was forgotten")
		for _, k := range []string{"c", "d", "a"} {
			assert.Positive(t, l.allow(k, epoch), "%s is remembered", k)
		}
	})
}
