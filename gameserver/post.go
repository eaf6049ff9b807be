package gameserver

import (
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
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
func (l *loop) post(f func()) error {
	if f == nil {
		return errors.New("gameserver: Post of nil func")
	}
	return l.push(f, nil)
}

func (l *loop) push(f func(), t *Timer) error { return l.q.push(f, t, l.wake) }

// runPosted admits new timers, then runs the posted functions, in order:
// those the last turn left first (the first of them whatever the time),
// then the new ones, until the turn is over its budget (turnBudget); the
// rest wait for the next turn. Functions posted meanwhile wait for the
// next turn.
func (l *loop) runPosted() {
	funcs, timers := l.q.take()
	for _, t := range timers {
		if l.draining || t.state.Load() != timerPending {
			t.state.Store(timerStopped)
			continue
		}
		l.schedule(&t.t)
	}
	batch, carried := funcs, len(l.left) > 0
	if carried {
		batch = append(l.left, funcs...)
		l.left = nil
	}
	for i, f := range batch {
		if (i > 0 || !carried) && l.overBudget() {
			l.left = append([]func(){}, batch[i:]...)
			break
		}
		l.safely("posted function", f)
	}
	l.q.recycle(funcs)
}

// safely runs f on the loop; a panic is logged with its stack and the loop
// carries on.
func (l *loop) safely(what string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			l.cfg.Logger.Error("gameserver: panic in "+what, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	f()
}
