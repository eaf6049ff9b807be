package gameserver

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// loop is the event loop: configuration, the back end, timers, the post
// queue, counters and pools, and the connections that have work for this
// turn. Everything in it but q, serving, loopID, stoppedTimers and pub is
// owned by the loop goroutine.
type loop struct {
	cfg      *Config
	lim      limits
	prepared func(path []byte) *Prepared // the Handler's PreparedHandler.Prepared, or nil
	epoch    time.Time
	wake     func() // makes the loop's wait return; safe from any goroutine
	done     chan struct{}
	sys      backendSys

	baseCtx    context.Context // parent of every request's context; canceled when the loop stops
	baseCancel context.CancelFunc

	q             postQueue
	serving       atomic.Bool  // Serve was called
	loopID        atomic.Int64 // the loop's OS thread (Linux) or goroutine id; see onLoop
	timers        timerHeap
	timerSeq      uint64
	stoppedTimers atomic.Int64

	now        int64     // loop clock at the start of this turn
	turnWall   time.Time // wall clock at the start of this turn, for its busy time
	turn       uint64    // loop turns so far
	yielded    int64     // loop clock at the last yieldThread
	dateSec    int64     // wall-clock second dateField was formatted for
	dateField  []byte    // "Date: ...\r\n", refreshed once per second
	draining   bool      // Shutdown has begun: finish what is in flight, accept nothing
	drainStart int64     // loop clock when the drain began
	listening  bool      // the listener is open
	stopped    bool      // the loop ends after this turn

	readyQ     []*conn  // connections with complete requests left over, served next turn (FIFO)
	readySpare []*conn  // the previous turn's queue, reused
	pending    []*conn  // connections marked this turn (see mark), written by flushPending
	ended      []func() // functions of streams that ended (EventStream.OnClose), run by runEnded
	left       []func() // posted functions the last turn left to this one (turnBudget), run first

	free     [][]byte    // pooled bufSize buffers
	resps    []*response // pooled responses
	writers  []writer    // the rest of the slab new writers come from (response.handle)
	scratch  []byte
	eventBuf []byte // WriteEvent's framing, reused
	count    counters
	pub      statsBox
	access   *accessLog
	acceptOK bool // the last accept succeeded (log accept errors once per episode)

	budget outBudget  // memory held by output queues (Config.MaxOutputBytes)
	peers  peerConns  // open connections per client address (Config.MaxConnsPerAddr)
	idle   idleConns  // idle connections, oldest last (closed to make room at Config.MaxConns)
	lag    lagMonitor // the loop-lag timer's histogram
	slow   slowLog    // the slow-request log
	pool   workPool   // the worker pool (Go)
	wait   waitAttrib // the wait attribution (WaitStats)
}

// init sets the loop up for s; the back end's init gives the wake
// function.
func (l *loop) init(s *Server) {
	l.cfg, l.wake = &s.cfg, l.sys.init(l)
	l.lim = limits{maxHeaderBytes: s.cfg.MaxHeaderBytes, maxBodyBytes: s.cfg.MaxBodyBytes}
	if ph, ok := s.cfg.Handler.(PreparedHandler); ok {
		l.prepared = ph.Prepared
	}
	l.epoch = time.Now()
	l.done = make(chan struct{})
	l.baseCtx, l.baseCancel = context.WithCancel(context.Background())
	l.acceptOK = true
	if s.cfg.AccessLog != nil {
		l.access = &accessLog{w: s.cfg.AccessLog}
	}
	l.pool.init(s.cfg.Workers, s.cfg.WorkQueue, s.cfg.Logger)
	l.budget.max = int(s.cfg.MaxOutputBytes)
	l.peers.max = max(s.cfg.MaxConnsPerAddr, 0)
}

// run is the loop, one turn per iteration, the same for both back ends:
//
//  1. wait for events, a wake-up or the nearest deadline (endTurn
//     first: the previous turn's access log and counters);
//  2. dispatch the events: accept, read and serve one request per
//     connection, note hang-ups and writable sockets; the events the
//     last turn left first, in the order they came;
//  3. serve the connections queued by the previous turn (runReady);
//  4. fire due timers and connection deadlines;
//  5. run posted functions (Post, Finish of deferred responses), then
//     the functions of streams that ended (EventStream.OnClose; those of
//     streams that end in step 6 run in the next turn, at once);
//  6. write every connection marked with output or a change of state,
//     once (flushPending, redis's beforeSleep);
//  7. while Shutdown drains, stop once no connection is left and the
//     listener is closed (stopIfDrained).
//
// Steps 2 to 5 stop at turnBudget: the events, queued connections,
// timers and posted functions left go on at the next turn, which comes
// at once, after this one's writes. Steps 2 to 5 only queue output and
// mark connections; step 6 is the one place the loop writes, settles
// interest and re-arms deadlines. startTurn and endTurn bound a turn,
// for the counters.
func (l *loop) run() error {
	l.startTurn(time.Now())
	l.runPosted()
	l.flushPending()
	for !l.stopped {
		l.endTurn()
		timeout := l.nextTimeout(l.clock())
		if len(l.readyQ) > 0 || len(l.ended) > 0 || len(l.left) > 0 || l.sys.leftover() {
			timeout = 0
		}
		if err := l.sys.wait(timeout); err != nil {
			return err
		}
		l.startTurn(time.Now())
		l.yieldThread()
		woke := l.sys.dispatch()
		l.runReady()
		l.runTimers(l.now)
		if woke || len(l.left) > 0 {
			l.runPosted()
		}
		l.runEnded()
		l.flushPending()
		l.stopIfDrained()
	}
	return ErrServerClosed
}

// turnBudget is how long a turn runs its work: once it has run this long
// (its yield to the Go scheduler included, yieldThread), the readiness
// events, the connections with a request queued (runReady), the timers
// due and the functions posted that are left wait for the next turn,
// which comes at once, after this turn's writes and with the events
// that came meanwhile behind the ones left. So a turn that found 200 requests
// ready serves those it can in about 4 ms, writes their responses, and
// leaves the rest to the turns that follow, first in line, instead of
// making all 200 wait for the slowest's end: a turn's length is what
// every client in it waits, and a response goes out at the end of its
// turn. Likewise two long pieces of work (a tick's step and a share of
// its fan-out, each about 4 ms) take a turn each, not one turn of both.
//
// The bound: a turn runs for turnBudget, plus the one piece of work of
// each kind that is always run so that none can starve (the first event,
// the first queued connection, the first timer and the first posted
// function the last turn left), plus its writes. One slow handler, timer
// or posted function therefore costs the others its own length once;
// a client's request waits for the turns ahead of it in line, each of
// about turnBudget, not for every request another turn read.
const turnBudget = 4 * time.Millisecond

// overBudget reports whether this turn has run for turnBudget.
func (l *loop) overBudget() bool { return time.Since(l.turnWall) >= turnBudget }

// yieldEvery is how often a busy loop lets the Go scheduler run
// (yieldThread): under the 10 ms after which the runtime's monitor
// preempts a goroutine that has not been rescheduled, with room for a
// long turn, and no more often, since each yield hands the locked
// thread off and back (in perf, 3.5% of the server's CPU under ab at
// 4 ms).
const yieldEvery = 6 * time.Millisecond

// yieldThread calls runtime.Gosched once yieldEvery has passed since the
// last call. A loop under load never parks, so without it the runtime's
// monitor (sysmon) finds it on the same scheduling tick every 10 ms and
// preempts it, or takes its P away if it is waiting in epoll_wait just
// then; either costs the same hand-off of the locked thread as a
// Gosched, and the second also wakes the monitor every 20 us for a while
// after (on the project's 2-core machine, about 5% of the server's CPU
// under wrk). Yielding first keeps the monitor asleep.
func (l *loop) yieldThread() {
	if l.now-l.yielded >= int64(yieldEvery) {
		l.yielded = l.now
		runtime.Gosched()
	}
}

// mark notes that c has output queued or its state changed, so the end
// of the turn writes it and settles it. Handlers, Flush, 1xx responses,
// timers and posted functions only queue output and mark; they never
// write.
func (l *loop) mark(c *conn) {
	if !c.marked && c.phase != phaseClosed {
		c.marked = true
		l.pending = append(l.pending, c)
	}
}

// flushPending writes every marked connection once, in the order marked,
// and settles it (interest, deadline, ready queue, close). Writing may
// serve a request that was waiting for output to drain, and that may mark
// more connections: they are written in this pass too.
func (l *loop) flushPending() {
	for i := 0; i < len(l.pending); i++ {
		c := l.pending[i]
		l.pending[i] = nil
		c.marked = false
		if c.phase != phaseClosed {
			l.send(c)
		}
	}
	l.pending = l.pending[:0]
}

// runEnded runs the functions of streams that ended (EventStream.OnClose),
// in order, those they add to the list included.
func (l *loop) runEnded() {
	for i := 0; i < len(l.ended); i++ {
		f := l.ended[i]
		l.ended[i] = nil
		l.safely("stream's OnClose function", f)
	}
	l.ended = l.ended[:0]
}

// runReady gives each connection queued by the previous turns its next
// request, in the order they were queued; one that still has more joins
// the queue again, behind the connections queued meanwhile. Past
// turnBudget the rest stay at the head of the queue for the next turn
// (the first is always served). The loop does not sleep while the queue
// is not empty.
func (l *loop) runReady() {
	q := l.readyQ
	l.readyQ = l.readySpare[:0]
	for i, c := range q {
		if i > 0 && l.overBudget() {
			l.readyQ = append(l.readyQ, q[i:]...)
			clear(q[i:])
			break
		}
		q[i] = nil
		c.queued = false
		if c.phase != phaseClosed {
			l.serveBuffered(c)
			l.mark(c)
		}
		c.readyAt = 0
	}
	l.readySpare = q[:0]
}
