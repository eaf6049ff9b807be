package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxConnectFailures is how many failed connects a run tolerates; one more
// aborts it with ab's "Test aborted after 10 failures".
const maxConnectFailures = 10

// run is the state the workers of one run share: the request budget, the
// stop signals and the first document's length. Everything else each
// worker keeps to itself.
type run struct {
	t      *target
	addr   string
	total  int64        // the request budget
	left   atomic.Int64 // requests not yet started
	stopAt time.Time    // zero: no time limit
	log    *requestLog  // nil: none
	// drain lets requests in flight when the time limit passes finish and
	// count (an open loop: its longest waits are those still running at
	// the end); without it they are abandoned, as ab's.
	drain bool

	stop       atomic.Bool
	connFails  atomic.Int64
	docLen     atomic.Int64 // -1 until the first complete response
	abortOnce  sync.Once
	abortError *AbortError
}

func newRun(t *target, requests int) *run {
	r := &run{t: t, addr: t.addr.String(), total: int64(requests)}
	r.left.Store(int64(requests))
	r.docLen.Store(-1)
	return r
}

// take claims one request from the budget and returns its index in the
// run (0 for the first claimed); false when the budget is spent or the run
// stops.
func (r *run) take() (int64, bool) {
	if r.stop.Load() {
		return 0, false
	}
	left := r.left.Add(-1)
	return r.total - 1 - left, left >= 0
}

func (r *run) stopping() bool { return r.stop.Load() }

// expired reports whether the time limit has passed at now.
func (r *run) expired(now time.Time) bool {
	return !r.stopAt.IsZero() && !now.Before(r.stopAt)
}

// deadline is a request's network deadline: the timeout from its start,
// or the time limit if that comes first.
func (r *run) deadline(start time.Time) time.Time {
	return r.limitAt(start.Add(r.t.cfg.Timeout))
}

// cut reports whether a request that broke at now is abandoned, not
// counted: after the time limit, unless the run drains.
func (r *run) cut(now time.Time) bool { return !r.drain && r.expired(now) }

// limitAt is d, or the time limit if that comes first and the run does
// not drain.
func (r *run) limitAt(d time.Time) time.Time {
	if !r.drain && !r.stopAt.IsZero() && r.stopAt.Before(d) {
		return r.stopAt
	}
	return d
}

// localAddr is the address the next connection binds to (Config.BindAddrs,
// in turn, carried on from the warm-up to the measured run); nil lets the
// system pick.
func (r *run) localAddr() net.Addr {
	addrs := r.t.cfg.BindAddrs
	if len(addrs) == 0 {
		return nil
	}
	i := (r.t.bindNext.Add(1) - 1) % uint64(len(addrs))
	return &net.TCPAddr{IP: addrs[i].AsSlice()}
}

// abort stops the run with the first error reported.
func (r *run) abort(e *AbortError) {
	r.abortOnce.Do(func() { r.abortError = e })
	r.stop.Store(true)
}

// connectFailed counts a failed connect and aborts past the limit, as ab.
func (r *run) connectFailed(err error) {
	if r.connFails.Add(1) > maxConnectFailures {
		r.abort(&AbortError{Op: "apr_socket_connect()", Err: err})
	}
}

// checkLength reports whether a body length matches the first complete
// response's (always true with -l, and for the first response).
func (r *run) checkLength(n int64) bool {
	if r.docLen.Load() < 0 && r.docLen.CompareAndSwap(-1, n) {
		return true
	}
	return r.t.cfg.VariableLength || r.docLen.Load() == n
}

// Run performs cfg: the warm-up if any, whose figures are discarded, then
// the measured run, and returns the figures. Where ab would abort it stops
// and returns an *AbortError with the figures so far (ab prints none). A
// bad Config returns a nil Result and an error naming the field. When ctx
// is done the run stops starting requests, lets those in flight finish and
// returns what it measured with ctx's error. A RequestLog that could not
// be written is an error beside the figures.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	t, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if t.cfg.Warmup > 0 {
		if res, err := execute(ctx, t, math.MaxInt, t.cfg.Warmup, nil, false, nil); err != nil {
			return res, err
		}
	}
	var before *snapshot
	var scrapeErr error
	if t.cfg.MetricsURL != "" {
		before, scrapeErr = scrape(ctx, t.cfg.MetricsURL)
	}
	log := newRequestLog(t.cfg.RequestLog)
	res, err := execute(ctx, t, t.cfg.Requests, t.cfg.TimeLimit, t.cfg.Progress, t.cfg.Rate > 0, log)
	if lerr := log.close(); lerr != nil {
		err = errors.Join(err, fmt.Errorf("loadtest: request log: %w", lerr))
	}
	if t.cfg.MetricsURL != "" {
		var after *snapshot
		if scrapeErr == nil {
			after, scrapeErr = scrape(context.WithoutCancel(ctx), t.cfg.MetricsURL)
		}
		if scrapeErr != nil {
			res.Loop = &LoopFigures{Error: scrapeErr.Error()}
		} else {
			res.Loop = loopBetween(before, after)
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return res, err
}

// execute runs the workers once and merges their figures; with drain, the
// requests in flight at the time limit are waited for (the measured part
// of an open loop; a warm-up never drains, so that it ends on time).
func execute(ctx context.Context, t *target, requests int, limit time.Duration, progress func(int64), drain bool,
	log *requestLog) (*Result, error) {
	r := newRun(t, requests)
	r.drain, r.log = drain, log
	workers := make([]*worker, t.cfg.Concurrency)
	for i := range workers {
		workers[i] = newWorker(r) // before the clock starts: buffers and histograms
	}
	stopCtx := context.AfterFunc(ctx, func() { r.stop.Store(true) })
	defer stopCtx()
	start := time.Now()
	if limit > 0 {
		r.stopAt = start.Add(limit)
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		w.begin(start)
		wg.Go(w.loop)
	}
	stopProgress := watchProgress(workers, int64(requests), progress)
	wg.Wait()
	stopProgress()
	res := merge(t, start, workers)
	if res.OpenLoop != nil && limit > 0 {
		res.OpenLoop.Unsent = unsent(t.cfg.Rate, limit, requests, res.CompleteRequests)
	}
	if r.abortError != nil {
		r.abortError.Completed = res.CompleteRequests
		return res, r.abortError
	}
	return res, nil
}

func sum(workers []*worker, f func(*worker) int64) int64 {
	var n int64
	for _, w := range workers {
		n += f(w)
	}
	return n
}

// unsent is how many of an open loop's requests were due in the time
// limit (request i at i/rate, at most requests of them) and not sent, the
// run having completed complete.
func unsent(rate float64, limit time.Duration, requests int, complete int64) int64 {
	due := int64(math.Ceil(limit.Seconds() * rate))
	if requests > 0 && int64(requests) < due {
		due = int64(requests)
	}
	return max(due-complete, 0)
}
