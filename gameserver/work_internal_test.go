package gameserver

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestPool(t *testing.T, workers, queue int) (*workPool, *atomic.Int32) {
	var p workPool
	logged := new(atomic.Int32)
	p.init(workers, queue, slog.New(countingHandler{logged}))
	t.Cleanup(p.stop)
	return &p, logged
}

// countingHandler counts the records logged through it.
type countingHandler struct{ n *atomic.Int32 }

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func TestWorkPoolLogsRefusalsOncePerEpisode(t *testing.T) {
	// Ensure a full queue's refusals are logged once when they begin and
	// once when the queue takes work again, however many there are, and
	// that a second episode is logged again.
	p, logged := newTestPool(t, 1, 1)
	release := make(chan struct{})
	var wg sync.WaitGroup
	block := task{ctx: context.Background(), run: func(context.Context) { <-release; wg.Done() }}
	episode := func() {
		wg.Add(1)
		require.True(t, p.submit(block))
		require.Eventually(t, func() bool { return p.stats().Running == 1 }, waitLimit, time.Millisecond)
		wg.Add(1)
		require.True(t, p.submit(block))
		for range 50 {
			require.False(t, p.submit(block))
		}
		release <- struct{}{}
		release <- struct{}{}
		wg.Wait()
	}
	episode()
	assert.Equal(t, int32(1), logged.Load(), "50 refusals, one line")
	wg.Add(1)
	require.True(t, p.submit(block))
	assert.Equal(t, int32(2), logged.Load(), "the episode's end")
	release <- struct{}{}
	wg.Wait()
	require.Eventually(t, func() bool { return p.stats().Running == 0 }, waitLimit, time.Millisecond)
	episode()
	assert.Equal(t, int32(3), logged.Load(), "a second episode")
	assert.Equal(t, uint64(100), p.stats().Refused)
}

func TestWorkPoolBounds(t *testing.T) {
	// Ensure no more than the worker limit run at once, the queue holds at
	// most its bound, a task over it is refused at once, and every
	// accepted task runs.
	p, _ := newTestPool(t, 2, 3)
	release := make(chan struct{})
	var running, most atomic.Int32
	var wg sync.WaitGroup
	block := task{ctx: context.Background(), run: func(context.Context) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		running.Add(-1)
		wg.Done()
	}}
	wg.Add(2)
	require.True(t, p.submit(block))
	require.True(t, p.submit(block))
	require.Eventually(t, func() bool { return p.stats().Running == 2 }, waitLimit, time.Millisecond)
	wg.Add(3)
	for range 3 {
		require.True(t, p.submit(block))
	}
	assert.False(t, p.submit(block), "the queue is full")
	st := p.stats()
	assert.Equal(t, 3, st.Queued)
	assert.Equal(t, 2, st.Workers)
	assert.Equal(t, uint64(1), st.Refused)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(2), most.Load())
	require.Eventually(t, func() bool { return p.stats().Finished == 5 }, waitLimit, time.Millisecond)
	st = p.stats()
	assert.Zero(t, st.Queued)
	assert.Zero(t, st.Running)
	assert.Positive(t, st.WorkTime)
}

func TestWorkPoolSkipsCanceled(t *testing.T) {
	// Ensure a task whose context ended before a worker took it is not
	// run, and its skip function runs instead.
	p, _ := newTestPool(t, 1, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	skipped := make(chan struct{})
	require.True(t, p.submit(task{ctx: ctx,
		run:  func(context.Context) { t.Error("canceled work ran") },
		skip: func() { close(skipped) }}))
	select {
	case <-skipped:
	case <-time.After(waitLimit):
		t.Fatal("skip did not run")
	}
	assert.Equal(t, uint64(1), p.stats().Skipped)
	assert.Zero(t, p.stats().Finished)
}

func TestWorkPoolPanic(t *testing.T) {
	// Ensure a panic in work is logged and reported, and the worker goes
	// on with the next task.
	p, logged := newTestPool(t, 1, 4)
	got := make(chan any, 1)
	require.True(t, p.submit(task{ctx: context.Background(),
		run:      func(context.Context) { panic("boom") },
		panicked: func(v any) { got <- v }}))
	ran := make(chan struct{})
	require.True(t, p.submit(task{ctx: context.Background(), run: func(context.Context) { close(ran) }}))
	select {
	case v := <-got:
		assert.Equal(t, "boom", v)
	case <-time.After(waitLimit):
		t.Fatal("panic not reported")
	}
	select {
	case <-ran:
	case <-time.After(waitLimit):
		t.Fatal("the worker did not go on")
	}
	assert.Equal(t, int32(1), logged.Load())
}

func TestWorkPoolStop(t *testing.T) {
	// Ensure a stopped pool refuses work and drops what was queued.
	p, _ := newTestPool(t, 1, 4)
	release := make(chan struct{})
	require.True(t, p.submit(task{ctx: context.Background(), run: func(context.Context) { <-release }}))
	require.Eventually(t, func() bool { return p.stats().Running == 1 }, waitLimit, time.Millisecond)
	require.True(t, p.submit(task{ctx: context.Background(), run: func(context.Context) { t.Error("dropped work ran") }}))
	p.stop()
	close(release)
	assert.Zero(t, p.stats().Queued)
	assert.False(t, p.submit(task{ctx: context.Background(), run: func(context.Context) {}}))
	p.stop() // twice is fine
}
