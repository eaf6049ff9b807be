package loadtest

import (
	"sync"
	"time"
)

// progressTick is how often the progress goroutine looks at the counters.
const progressTick = 50 * time.Millisecond

// watchProgress calls report with the completed count each time another
// tenth of total is done, as ab's "Completed N requests" lines, until the
// returned stop is called. It does nothing when report is nil.
func watchProgress(workers []*worker, total int64, report func(int64)) (stop func()) {
	if report == nil || total < 10 {
		return func() {}
	}
	step := total / 10
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		next := step
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			n := sum(workers, func(w *worker) int64 { return w.completed.Load() })
			for ; n >= next && next < total; next += step {
				report(next)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
