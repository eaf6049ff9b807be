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
			require.LessOrEqual(t, len(l.full), max, "after client %d", i)
		}
		last := fmt.Sprint("client", 10*max-1)
		require.Zero(t, l.allow(last, now))
		assert.Positive(t, l.allow(last, now), "the newest client is remembered")

		now = now.Add(time.Hour)
		require.Zero(t, l.allow("late", now))
		assert.Len(t, l.full, 1, "full buckets are forgotten when the map is pruned")
	})
}
