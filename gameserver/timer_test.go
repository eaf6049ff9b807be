package gameserver

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCore returns the loop of a server that is not serving, so a test can
// drive its timer heap with a clock of its own (loop-clock nanoseconds),
// in a turn that never runs out of its budget (turnBudget).
func testCore(t *testing.T) *loop {
	t.Helper()
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	s.loop.turnWall = time.Now().Add(time.Hour)
	return &s.loop
}

// arm schedules f at when (and every period after, if period > 0) as the
// loop does when it admits a new timer.
func arm(c *loop, when, period int64, f func()) *Timer {
	t := &Timer{f: f, l: c}
	t.t = timer{when: when, period: period, index: -1, user: t}
	c.schedule(&t.t)
	return t
}

func TestTimerOrder(t *testing.T) {
	// Ensure timers fire in deadline order, equal deadlines in the order
	// scheduled, and none before its deadline.
	c := testCore(t)
	var fired []string
	for _, tc := range []struct {
		name string
		when int64
	}{{"c", 30}, {"a", 10}, {"b1", 20}, {"b2", 20}, {"d", 40}} {
		arm(c, tc.when, 0, func() { fired = append(fired, tc.name) })
	}
	c.runTimers(9)
	assert.Empty(t, fired)
	c.runTimers(20)
	assert.Equal(t, []string{"a", "b1", "b2"}, fired)
	c.runTimers(100)
	assert.Equal(t, []string{"a", "b1", "b2", "c", "d"}, fired)
	assert.Equal(t, -1, c.nextTimeout(100), "no timer left: wait without limit")
}

func TestTimerNextTimeout(t *testing.T) {
	// Ensure epoll_wait's timeout is the nearest deadline in ms, rounded up.
	c := testCore(t)
	arm(c, int64(2500*time.Microsecond), 0, func() {})
	assert.Equal(t, 3, c.nextTimeout(0))
	assert.Equal(t, 1, c.nextTimeout(int64(2*time.Millisecond)))
	assert.Equal(t, 0, c.nextTimeout(int64(3*time.Millisecond)))
}

func TestTimerStop(t *testing.T) {
	// Ensure a stopped timer never fires and Stop reports it stopped it.
	t.Run("OK", func(t *testing.T) {
		c := testCore(t)
		tm := arm(c, 10, 0, func() { t.Error("stopped timer fired") })
		assert.True(t, tm.Stop())
		assert.False(t, tm.Stop(), "second Stop")
		c.runTimers(100)
		assert.Empty(t, c.timers)
	})

	// Ensure Stop after the timer fired returns false.
	t.Run("AfterFire", func(t *testing.T) {
		c := testCore(t)
		n := 0
		tm := arm(c, 10, 0, func() { n++ })
		c.runTimers(10)
		assert.Equal(t, 1, n)
		assert.False(t, tm.Stop())
	})

	// Ensure a stopped Every stops repeating.
	t.Run("Every", func(t *testing.T) {
		c := testCore(t)
		n := 0
		tm := arm(c, 10, 10, func() { n++ })
		c.runTimers(10)
		c.runTimers(20)
		assert.True(t, tm.Stop())
		c.runTimers(100)
		assert.Equal(t, 2, n)
		assert.Empty(t, c.timers)
	})

	// Ensure many stopped timers do not pile up in the heap.
	t.Run("Sweep", func(t *testing.T) {
		c := testCore(t)
		for range 200 {
			arm(c, int64(time.Hour), 0, func() {}).Stop()
		}
		arm(c, int64(time.Hour), 0, func() {})
		c.runTimers(0)
		assert.Len(t, c.timers, 1)
	})

	// Ensure Stop is safe from other goroutines while the loop fires timers
	// (run with -race), and exactly one of Stop and firing wins.
	t.Run("Concurrent", func(t *testing.T) {
		c := testCore(t)
		var mu sync.Mutex
		fired := 0
		var tms []*Timer
		for i := range 100 {
			tms = append(tms, arm(c, int64(i), 0, func() { mu.Lock(); fired++; mu.Unlock() }))
		}
		stopped := 0
		var wg sync.WaitGroup
		wg.Go(func() {
			for _, tm := range tms {
				if tm.Stop() {
					stopped++
				}
			}
		})
		for now := range int64(100) {
			c.runTimers(now)
		}
		wg.Wait()
		assert.Equal(t, 100, fired+stopped)
	})
}

func TestTimerEvery(t *testing.T) {
	// Ensure Every schedules from the previous deadline, not from when f
	// ran, and skips the runs missed while the loop was busy.
	c := testCore(t)
	var runs []int64
	var now int64
	tm := arm(c, 10, 10, func() { runs = append(runs, now) })
	for _, now = range []int64{10, 23, 30, 75, 79, 80} {
		c.runTimers(now)
	}
	// 10: on time. 23: late, next deadline stays 30. 30: on time. 75: busy
	// since 30, so 40..70 are skipped, not queued, and the next is 80.
	assert.Equal(t, []int64{10, 23, 30, 75, 80}, runs)
	assert.Equal(t, int64(90), tm.t.when)
}

func TestTimerPanic(t *testing.T) {
	// Ensure a panicking timer is contained and later timers still run.
	c := testCore(t)
	ran := false
	arm(c, 1, 0, func() { panic("timer boom") })
	arm(c, 2, 0, func() { ran = true })
	c.runTimers(5)
	assert.True(t, ran)
}

func TestConnDeadline(t *testing.T) {
	// Ensure a connection deadline moved later fires at the new time only,
	// and one moved earlier fires at the earlier time: the entry leaves
	// the heap (and loop.expire runs, for a closed conn doing nothing)
	// exactly then.
	c := testCore(t)
	cn := &conn{phase: phaseClosed}
	cn.tm = timer{index: -1, conn: cn}
	c.setDeadline(cn, 100)
	c.setDeadline(cn, 300) // later: lazy, the heap entry stays at 100
	for _, now := range []int64{100, 200} {
		c.runTimers(now)
		require.Len(t, c.timers, 1, "expired at %d, before its deadline", now)
	}
	assert.Equal(t, int64(300), c.timers[0].when, "the entry moved to the new deadline")
	c.setDeadline(cn, 250) // earlier than 300: the heap is fixed
	c.runTimers(249)
	require.Len(t, c.timers, 1, "expired before 250")
	c.runTimers(250)
	assert.Empty(t, c.timers, "not expired at 250")

	c.setDeadline(cn, 400)
	c.setDeadline(cn, 0) // none: the entry is dropped when it surfaces
	c.runTimers(500)
	assert.Empty(t, c.timers)
}

func TestAfterFunc(t *testing.T) {
	// Ensure AfterFunc and Every run f on the running loop: d <= 0 on the
	// next turn, Every repeatedly until stopped.
	s, _, _ := startLoop(t, Config{})
	done := make(chan struct{})
	s.AfterFunc(-time.Second, func() { close(done) })
	waitFor(t, done)

	ticks := make(chan struct{}, 10)
	tk := s.Every(time.Millisecond, func() { ticks <- struct{}{} })
	for range 3 {
		select {
		case <-ticks:
		case <-time.After(waitLimit):
			t.Fatal("Every did not tick")
		}
	}
	assert.True(t, tk.Stop())
	assert.Panics(t, func() { s.Every(0, func() {}) })
}
