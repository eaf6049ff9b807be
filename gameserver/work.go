package gameserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWorkQueue is the bound on work waiting for a worker when
// Config.WorkQueue is 0.
const DefaultWorkQueue = 1024

// Go answers a request with work done off the loop: it defers the
// response (see Defer), runs work on a goroutine of the Server's worker
// pool, and then finish on the loop goroutine with work's result, to write
// the response; the handler calling Go returns at once. Use it for
// CPU-heavy or blocking work (a password hash, an outbound call) that
// would otherwise hold every other client of the loop: while work runs,
// the loop serves other connections, and this connection reads and
// serves nothing more (pipelined requests wait, in order, behind the
// response), as for any deferred response.
//
// Call Go from the handler, with the handler's ResponseWriter and
// request, at most once, and write nothing to w after it. work runs on a
// pool goroutine, in parallel with the loop and other work: it must not
// touch loop-owned state (anything handlers, timers and posted functions
// share without locks) nor w, and it gets the request's context, which is
// canceled when the client goes away, the response ends otherwise
// (Config.DeferTimeout) or the server stops. finish runs on the loop like
// a handler, with a fresh ResponseWriter valid until it returns and the
// same request (its body still readable); its panic is answered 500, as
// a handler's.
//
// The pool is bounded (Config.Workers goroutines, Config.WorkQueue tasks
// waiting): when the queue is full, Go answers 503 Service Unavailable
// with "Retry-After: 1" at once, in the handler, and neither work nor
// finish runs. Work whose client went away before a worker took it is
// not started, and finish does not run for it. A panic in work is logged
// and answered 500. Shutdown waits for the responses of queued and running
// work as for any deferred response, up to its context; when the context
// ends (or on Close) the responses still waiting are answered 503 before
// their connections close (on Linux; the portable back end only closes
// them), queued work never runs, and running work's context is canceled.
//
// Not under gameserver (net/http, httptest), or if the response cannot
// be deferred (already deferred, streaming or ended), Go runs work and
// then finish inline, on the calling goroutine, with the handler's own w:
// the same handler works under both servers. Through a SerialHandler,
// work runs with its lock released, on one of its workers, and finish
// with the lock held again.
func Go[T any](w http.ResponseWriter, r *http.Request, work func(ctx context.Context) T, finish func(w http.ResponseWriter, r *http.Request, v T)) {
	rs := responseOf(w)
	if rs != nil && rs.c.phase == phaseServing && !rs.l.pool.room() {
		rs.l.pool.refuse()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: work queue full", http.StatusServiceUnavailable)
		return
	}
	d, ok := Defer(w)
	if !ok {
		var v T
		if serialWork(r.Context(), func() { v = work(r.Context()) }) { // a SerialHandler's lock and workers
			finish(w, r, v)
		}
		return
	}
	t := task{
		ctx: r.Context(),
		run: func(ctx context.Context) {
			v := work(ctx)
			d.Finish(func(w http.ResponseWriter) { finish(w, r, v) })
		},
		panicked: func(any) {
			d.Finish(func(w http.ResponseWriter) {
				http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			})
		},
	}
	if !rs.l.pool.submit(t) {
		// Only after the pool stopped (room was checked on the loop,
		// the only goroutine that submits): the loop is stopping.
		d.Finish(func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		})
	}
}

// defaultWorkers is Config.Workers when it is 0: one fewer than GOMAXPROCS,
// at least 1, so that CPU-bound work leaves the loop a P of its own when it
// returns from epoll_wait.
func defaultWorkers() int { return max(runtime.GOMAXPROCS(0)-1, 1) }

// workPool is the Server's bounded worker pool, in the shape of nginx's
// thread pools (ngx_thread_pool: a task queue bounded by max_queue, a fixed
// set of threads, completion handed back to the event loop through an
// eventfd) and libuv's uv_queue_work (work_cb on a pool thread, after_work_cb
// on the loop). Here the loop side of a task is a deferred response that
// the task finishes with Finish, which goes through the post queue and its
// eventfd; the pool itself only runs functions off the loop.
//
// Workers start on demand, up to the limit, and live until the loop stops,
// so an idle server has none. The queue is a buffered channel: submit never
// blocks, and a full queue refuses the task at once. Everything in it is safe
// from any goroutine.
type workPool struct {
	tasks   chan task
	limit   int           // workers at most
	quit    chan struct{} // closed when the loop stops
	mu      sync.Mutex    // guards workers and stopped
	workers int
	stopped bool
	closed  atomic.Bool  // stopped, readable without mu
	log     *slog.Logger // panics in work, and episodes of refused work

	// An episode of refused work: from the first task refused for a full
	// queue to the next one taken, logged once at each end (nginx logs
	// every overflow; one line per episode says the same without
	// flooding the log while a storm lasts). Only the loop submits, so
	// only the loop touches them.
	refusing    bool
	refusedSeen uint64 // refused when the episode began

	queued   atomic.Int64  // tasks waiting for a worker
	running  atomic.Int64  // tasks a worker is running now
	idle     atomic.Int64  // workers waiting for a task
	refused  atomic.Uint64 // tasks refused: queue full, or the loop stopped
	skipped  atomic.Uint64 // tasks not started because their context had ended
	finished atomic.Uint64 // tasks run to the end (or to a panic)
	workNs   atomic.Int64  // time workers spent running tasks, nanoseconds
}

// task is one unit of work: run runs on a worker unless ctx has ended
// by the time a worker takes it, in which case skip runs instead (on the
// worker, too). run's panic is recovered, logged, and reported to run's
// caller through panicked.
type task struct {
	ctx      context.Context
	run      func(ctx context.Context)
	skip     func()
	panicked func(v any)
}

// init sets up a pool of at most workers goroutines and queue waiting
// tasks.
func (p *workPool) init(workers, queue int, log *slog.Logger) {
	p.tasks = make(chan task, queue)
	p.limit = workers
	p.quit = make(chan struct{})
	p.log = log
}

// room reports whether submit would take a task now. Called on the loop,
// the only goroutine that submits, the answer holds until the loop's next
// submit: workers only ever make more room.
func (p *workPool) room() bool { return !p.closed.Load() && len(p.tasks) < cap(p.tasks) }

// submit queues t for a worker and reports whether it was taken; false
// means the queue is full or the pool has stopped, and nothing of t runs.
// It never blocks.
func (p *workPool) submit(t task) bool {
	if p.closed.Load() {
		p.refused.Add(1)
		return false
	}
	p.queued.Add(1)
	select {
	case p.tasks <- t:
	default:
		p.queued.Add(-1)
		p.refuse()
		return false
	}
	if p.refusing {
		p.refusing = false
		p.log.Warn("gameserver: work queue has room again", "refused", p.refused.Load()-p.refusedSeen)
	}
	if p.queued.Load() > p.idle.Load() {
		p.spawn()
	}
	return true
}

// refuse counts a task refused for a full queue, and logs the first of
// an episode. Only the loop calls it.
func (p *workPool) refuse() {
	n := p.refused.Add(1)
	if !p.refusing {
		p.refusing, p.refusedSeen = true, n-1
		p.log.Error("gameserver: work queue full; refusing work with 503 until it has room",
			"queue", cap(p.tasks), "workers", p.limit)
	}
}

// spawn starts a worker if there are fewer than the limit and the pool
// has not stopped.
func (p *workPool) spawn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped && p.workers < p.limit {
		p.workers++
		go p.worker()
	}
}

// worker runs tasks until the pool stops.
func (p *workPool) worker() {
	for {
		p.idle.Add(1)
		select {
		case t := <-p.tasks:
			p.idle.Add(-1)
			p.queued.Add(-1)
			p.do(t)
		case <-p.quit:
			p.idle.Add(-1)
			return
		}
	}
}

// do runs one task on the calling worker.
func (p *workPool) do(t task) {
	if t.ctx.Err() != nil {
		p.skipped.Add(1)
		if t.skip != nil {
			t.skip()
		}
		return
	}
	p.running.Add(1)
	start := time.Now()
	defer func() {
		p.workNs.Add(int64(time.Since(start)))
		p.running.Add(-1)
		p.finished.Add(1)
		if v := recover(); v != nil {
			p.log.Error("gameserver: panic in work", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if t.panicked != nil {
				t.panicked(v)
			}
		}
	}()
	t.run(t.ctx)
}

// stop ends the workers once their current task returns; tasks still
// queued never run. Work already running is not interrupted (its context
// is canceled if it is a request's). Safe to call more than once.
func (p *workPool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	p.closed.Store(true)
	close(p.quit)
	for {
		select {
		case <-p.tasks:
			p.queued.Add(-1)
		default:
			return
		}
	}
}

// WorkStats are the worker pool's figures in Stats.
type WorkStats struct {
	Workers  int           // worker goroutines started so far (at most Config.Workers)
	Queued   int           // tasks waiting for a worker now
	Running  int           // tasks running now
	Refused  uint64        // tasks refused with 503 because the queue was full (or the server had stopped)
	Skipped  uint64        // tasks not started because their client had gone away
	Finished uint64        // tasks run to their end (a panic included)
	WorkTime time.Duration // time workers spent running tasks
}

// stats returns the pool's figures now.
func (p *workPool) stats() WorkStats {
	p.mu.Lock()
	n := p.workers
	p.mu.Unlock()
	return WorkStats{
		Workers:  n,
		Queued:   int(max(p.queued.Load(), 0)),
		Running:  int(p.running.Load()),
		Refused:  p.refused.Load(),
		Skipped:  p.skipped.Load(),
		Finished: p.finished.Load(),
		WorkTime: time.Duration(p.workNs.Load()),
	}
}
