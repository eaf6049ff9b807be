package gameserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
)

// Lifecycle of a loop, guarded by postQueue.mu.
const (
	stateNew     = iota // before Serve
	stateRunning        // Serve is running the loop
	stateStopped        // the loop has stopped, or Shutdown/Close came before Serve
)

// postQueue carries work from any goroutine to the loop: posted functions
// and new timers, in a mutex-protected slice. Only the first post after the
// loop took the queue wakes it (one eventfd write per batch, not per post).
type postQueue struct {
	mu     sync.Mutex
	state  int
	funcs  []func()
	spare  []func() // the previous batch's slice, reused
	timers []*Timer
	woken  bool // a wake-up is on its way to the loop
	addr   net.Addr
}

// push queues f (or t) and wakes the loop if no wake-up is on its way; it
// fails once the loop has stopped. The wake-up is sent under the lock, so
// the loop cannot stop and release its eventfd in between.
func (q *postQueue) push(f func(), t *Timer, wake func()) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state == stateStopped {
		return ErrServerClosed
	}
	if f != nil {
		q.funcs = append(q.funcs, f)
	} else {
		q.timers = append(q.timers, t)
	}
	if q.state == stateRunning && !q.woken {
		wake()
	}
	q.woken = true
	return nil
}

// take hands the queued work to the loop.
func (q *postQueue) take() (funcs []func(), timers []*Timer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	funcs, timers = q.funcs, q.timers
	q.funcs, q.spare = q.spare[:0], nil
	q.timers = nil
	q.woken = false
	return funcs, timers
}

// recycle returns a batch's slice for reuse once its functions have run.
func (q *postQueue) recycle(funcs []func()) {
	clear(funcs)
	q.mu.Lock()
	if q.spare == nil {
		q.spare = funcs[:0]
	}
	q.mu.Unlock()
}

// transition moves the lifecycle from one state to another and reports the
// state found.
func (q *postQueue) transition(from, to int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.state
	if s == from {
		q.state = to
	}
	return s
}

// stop marks the loop stopped and drops work that will never run.
func (q *postQueue) stop() {
	q.mu.Lock()
	q.state = stateStopped
	for _, t := range q.timers {
		t.state.CompareAndSwap(timerPending, timerStopped)
	}
	q.funcs, q.spare, q.timers = nil, nil, nil
	q.mu.Unlock()
}

// post queues f for the loop (Server.Post).
func (c *core) post(f func()) error {
	if f == nil {
		return errors.New("gameserver: Post of nil func")
	}
	return c.push(f, nil)
}

func (c *core) push(f func(), t *Timer) error { return c.q.push(f, t, c.wake) }

// runPosted admits new timers, then runs the posted functions, in order.
// Functions posted meanwhile wait for the next turn.
func (c *core) runPosted() {
	funcs, timers := c.q.take()
	for _, t := range timers {
		if c.draining || t.state.Load() != timerPending {
			t.state.Store(timerStopped)
			continue
		}
		c.schedule(&t.t)
	}
	for _, f := range funcs {
		c.safely("posted function", f)
	}
	c.q.recycle(funcs)
}

// safely runs f on the loop; a panic is logged with its stack and the loop
// carries on.
func (c *core) safely(what string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			c.cfg.Logger.Error("gameserver: panic in "+what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	f()
}

// spawn runs body, the loop's life from start to teardown, on a new
// goroutine locked to its OS thread, and returns its result. If a handler,
// timer or posted function calls runtime.Goexit (as testing's t.FailNow
// does), the loop cannot go on: abandon (the back end's teardown) closes
// the listener and every connection and marks the server stopped, and
// spawn returns ErrLoopExited instead of leaving Serve and every client
// waiting forever. A panic that escapes body is not ours to handle: it
// goes on, and ends the program.
func (c *core) spawn(body func() error, abandon func()) error {
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer c.loopID.Store(0) // before the thread may run other goroutines
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				panic(v)
			}
			c.cfg.Logger.Error(ErrLoopExited.Error())
			abandon()
			res <- ErrLoopExited
		}()
		err := body()
		returned = true
		res <- err
	}()
	return <-res
}

// claim lets exactly one Serve call proceed.
func (c *core) claim(ln net.Listener) error {
	if c.serving.Swap(true) {
		ln.Close()
		return errors.New("gameserver: Serve called twice")
	}
	return nil
}

// begin marks the loop running; it fails if Shutdown or Close came first.
func (c *core) begin() error {
	if c.q.transition(stateNew, stateRunning) != stateNew {
		return ErrServerClosed
	}
	c.startLag(c.cfg.LagResolution)
	return nil
}

// end marks the loop stopped and releases Shutdown and Close waiters.
func (c *core) end() {
	c.markStopped()
	c.pool.stop()
	c.q.stop()
	c.baseCancel()
	close(c.done)
}

// shutdown asks the loop to drain (Server.Shutdown).
func (l *loop) shutdown(ctx context.Context) error {
	if l.q.transition(stateNew, stateStopped) == stateNew {
		l.end()
		return nil
	}
	if l.post(l.beginDrain) != nil {
		<-l.done
		return nil
	}
	if l.onLoop() {
		return ErrLoopGoroutine // waiting here would wait for ourselves
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		l.close()
		return ctx.Err()
	}
}

// close asks the loop to stop at once (Server.Close).
func (l *loop) close() error {
	if l.q.transition(stateNew, stateStopped) == stateNew {
		l.end()
		return nil
	}
	if l.post(l.forceStop) == nil && l.onLoop() {
		return ErrLoopGoroutine
	}
	<-l.done
	return nil
}

// setAddr records the listening address for Server.Addr and in the
// requests' context, as net/http does. It runs before the loop starts.
func (c *core) setAddr(a net.Addr) {
	c.baseCtx = context.WithValue(c.baseCtx, http.LocalAddrContextKey, a)
	c.q.mu.Lock()
	c.q.addr = a
	c.q.mu.Unlock()
}

// addr returns the listening address, nil before Serve (Server.Addr).
func (c *core) addr() net.Addr {
	c.q.mu.Lock()
	defer c.q.mu.Unlock()
	return c.q.addr
}
