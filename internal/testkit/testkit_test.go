package testkit_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	assert.Equal(t, time.Duration(6), testkit.Quantile(ds, 0.5))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 0.99))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 1))
	assert.Equal(t, time.Duration(1), testkit.Quantile(ds, 0))
}

func TestABField(t *testing.T) {
	report := "Server Software:        gameserver\nComplete requests:      5000\nFailed requests:        0\n"
	assert.Equal(t, "5000", testkit.ABField(report, "Complete requests"))
	assert.Equal(t, "gameserver", testkit.ABField(report, "Server Software"))
	assert.Equal(t, "", testkit.ABField(report, "Non-2xx responses"))
}

func TestWatchStalls(t *testing.T) {
	// Ensure a stall of the watcher's goroutine is seen: GOMAXPROCS 1 and
	// a goroutine that keeps the only P busy for 50 ms.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := testkit.WatchStalls()
	time.Sleep(5 * time.Millisecond) // the watcher is sleeping
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	assert.GreaterOrEqual(t, stop(), 5*time.Millisecond)
}
