package gameserver

import (
	"container/heap"
	"sync/atomic"
	"time"
)

// Timer is a function scheduled on the loop by Server.AfterFunc or
// Server.Every. Its methods are safe from any goroutine.
type Timer struct {
	state atomic.Int32 // timerPending, timerFired or timerStopped
	f     func()
	t     timer
	l     *loop
}

const (
	timerPending int32 = iota
	timerFired
	timerStopped
)

// Stop prevents the Timer from firing again. It returns true if the call
// stopped the timer, false if it had already fired (AfterFunc), had already
// been stopped, or its server had stopped. Stop does not wait for a run of f
// that is in progress.
func (t *Timer) Stop() bool {
	if t == nil || !t.state.CompareAndSwap(timerPending, timerStopped) {
		return false
	}
	t.l.stoppedTimers.Add(1)
	return true
}

// timer is one entry of the loop's deadline heap: either a user Timer or a
// connection's deadline (see conn.deadline). Times are loop-clock
// nanoseconds (loop.clock).
type timer struct {
	when   int64
	period int64  // > 0 for Every
	seq    uint64 // tie-break: equal deadlines fire in the order scheduled
	index  int    // position in the heap, -1 when not in it
	user   *Timer // set for AfterFunc and Every
	conn   *conn  // set for a connection deadline
}

// timerHeap is a min-heap of deadlines (container/heap). Connection
// deadlines are re-armed lazily: moving a deadline later only updates
// conn.deadline, and the entry is pushed back when it surfaces, so a busy
// keep-alive connection costs no heap operation per request.
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// clock returns the loop clock: monotonic nanoseconds since New.
func (l *loop) clock() int64 { return int64(time.Since(l.epoch)) }

// addTimer schedules f after d and, if period > 0, every period after that.
// Safe from any goroutine: the timer reaches the heap through the post queue,
// so it is armed on the loop's next turn.
func (l *loop) addTimer(d, period time.Duration, f func()) *Timer {
	t := &Timer{f: f, l: l}
	t.t = timer{when: l.clock() + int64(d), period: int64(period), index: -1, user: t}
	if l.push(nil, t) != nil {
		t.state.Store(timerStopped)
	}
	return t
}

// afterLoop schedules f to run on the loop after d: the engine's own
// timers, armed from the loop goroutine only (no post queue). They are
// user timers to the heap: Shutdown stops those armed before it began.
func (l *loop) afterLoop(d time.Duration, f func()) *Timer {
	t := &Timer{l: l, f: f}
	t.t = timer{when: l.clock() + int64(d), index: -1, user: t}
	l.schedule(&t.t)
	return t
}

// schedule puts t in the heap.
func (l *loop) schedule(t *timer) {
	l.timerSeq++
	t.seq = l.timerSeq
	heap.Push(&l.timers, t)
}

// unschedule removes t from the heap if it is there.
func (l *loop) unschedule(t *timer) {
	if t.index >= 0 {
		heap.Remove(&l.timers, t.index)
	}
}

// nextTimeout returns how long epoll_wait may sleep, in milliseconds
// rounded up, or -1 when no timer is pending.
func (l *loop) nextTimeout(now int64) int {
	if len(l.timers) == 0 {
		return -1
	}
	d := l.timers[0].when - now
	if d <= 0 {
		return 0
	}
	return int((d + int64(time.Millisecond) - 1) / int64(time.Millisecond))
}

// runTimers fires every timer due at now. A timer scheduled while they run
// (by a timer, a handler or another goroutine) waits for the next turn, so
// a timer that re-arms itself cannot starve the loop.
//
// Past the turn's budget (turnBudget), the AfterFunc and Every timers
// still due wait for the next turn, which comes at once; the first of a
// turn always runs.
func (l *loop) runTimers(now int64) {
	l.sweepStoppedTimers()
	ran := false
	for len(l.timers) > 0 && l.timers[0].when <= now {
		t := l.timers[0]
		if t.conn != nil {
			l.connTimer(t, now)
			continue
		}
		if ran && l.overBudget() {
			return
		}
		heap.Pop(&l.timers)
		l.userTimer(t.user, now)
		ran = true
	}
}

// connTimer handles a connection's deadline entry reaching the top: either
// the deadline moved later (push it back) or it expired.
func (l *loop) connTimer(t *timer, now int64) {
	dl := t.conn.deadline
	switch {
	case dl == 0:
		heap.Pop(&l.timers)
	case dl > now:
		t.when = dl
		heap.Fix(&l.timers, 0)
	default:
		heap.Pop(&l.timers)
		l.expire(t.conn)
	}
}

// userTimer runs an AfterFunc or Every timer that came due.
func (l *loop) userTimer(u *Timer, now int64) {
	if u.t.period <= 0 {
		if u.state.CompareAndSwap(timerPending, timerFired) {
			l.safely("timer", u.f)
		} else {
			l.stoppedTimers.Add(-1)
		}
		return
	}
	if u.state.Load() != timerPending {
		l.stoppedTimers.Add(-1)
		return
	}
	l.safely("timer", u.f)
	// Skip runs missed while the loop was busy: the next deadline is the
	// first multiple of period after now, counted from the previous one.
	next := u.t.when + u.t.period
	if next <= now {
		next += (now - next) / u.t.period * u.t.period
		if next <= now {
			next += u.t.period
		}
	}
	u.t.when = next
	l.schedule(&u.t)
}

// sweepStoppedTimers drops stopped timers from the heap once they make up
// most of it, so many stopped long timers do not pile up.
func (l *loop) sweepStoppedTimers() {
	if n := l.stoppedTimers.Load(); n < 64 || int(n) < len(l.timers)/2 {
		return
	}
	l.dropTimers(func(u *Timer) bool { return u.state.Load() == timerStopped })
}

// stopUserTimers stops and drops every AfterFunc and Every timer (Shutdown,
// Close); connection deadlines stay.
func (l *loop) stopUserTimers() {
	l.dropTimers(func(u *Timer) bool {
		u.state.CompareAndSwap(timerPending, timerStopped)
		return true
	})
}

// dropTimers removes the user timers for which drop reports true.
func (l *loop) dropTimers(drop func(*Timer) bool) {
	kept := l.timers[:0]
	for _, t := range l.timers {
		if t.user != nil && drop(t.user) {
			t.index = -1
			continue
		}
		t.index = len(kept)
		kept = append(kept, t)
	}
	clear(l.timers[len(kept):])
	l.timers = kept
	heap.Init(&l.timers)
	l.stoppedTimers.Store(0)
}

// setDeadline sets conn's single deadline (loop clock, 0 = none). Moving it
// later is free; moving it earlier fixes the heap.
func (l *loop) setDeadline(cn *conn, dl int64) {
	cn.deadline = dl
	t := &cn.tm
	switch {
	case dl == 0:
	case t.index < 0:
		t.when = dl
		l.schedule(t)
	case dl < t.when:
		t.when = dl
		heap.Fix(&l.timers, t.index)
	}
}

// after returns the loop-clock deadline d after now, or 0 (none) for d < 0.
func after(now int64, d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	return now + int64(d)
}
