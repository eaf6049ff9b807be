package loadtest

import (
	"sync"
	"time"
)

// progressTick is how often the progress goroutine looks at the counters.
const progressTick = 50 * time.Millisecond

// watchProgress calls report with the completed count each time another
// tenth of total is done, as ab's "Completed N requests" lines, until the
// returned stop is called; stop reports the tenths reached by then. It does
// nothing when report is nil.
func watchProgress(workers []*worker, total int64, report func(int64)) (stop func()) {
	if report == nil || total < 10 {
		return func() {}
	}
	step, next := total/10, total/10
	catchUp := func() {
		n := sum(workers, func(w *worker) int64 { return w.completed.Load() })
		for ; n >= next && next <= total; next += step {
			report(next)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				catchUp()
			}
		}
	})
	return func() { close(done); wg.Wait(); catchUp() }
}
