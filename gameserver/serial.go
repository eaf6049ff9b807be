package gameserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// SerialHandler serves a Handler written for the loop under a server that
// runs handlers concurrently, such as net/http's goroutine per connection,
// while keeping the loop's one guarantee: handlers run one at a time. It
// holds one lock (like an interpreter's global lock) around each call of
// the handler, and around the functions it runs for timers (AfterFunc,
// Every) and for Do, so that code which the loop would run on its one
// goroutine shares plain variables without locks here too. Create one with
// Serial; its methods are safe from any goroutine.
//
// What the loop does off its goroutine happens outside the lock:
//
//   - Go's work runs unlocked, on the handler's goroutine (net/http has one
//     per connection), and its finish back under the lock; other requests
//     are served meanwhile. As on the loop's worker pool, at most
//     GOMAXPROCS-1 works (at least 1, Config.Workers's default, read when
//     Serial is called) run at once, so that CPU-heavy work leaves a core
//     to the handlers; the others wait for their turn, unlocked, without
//     a bound on how many wait (the loop's WorkQueue), and work whose
//     client goes away while it waits never runs, nor does its finish.
//   - An event stream (Stream) is opened under the lock (open runs like
//     the handler), and then served through the ResponseWriter's Flush
//     with the lock released while it waits for events and writes them.
//     Writes to the stream from handlers and timers only queue, as on the
//     loop, and its handler's goroutine writes them.
//
// Anything else a handler does while it holds the lock (a slow database
// query, a blocking call) holds every other request, as on the loop. The
// lock is a sync.Mutex: waiting requests are not served in strict arrival
// order.
//
// Requests keep the context net/http gives them, with a value added that
// Go and Stream use to release the lock: a handler that passes a request
// to another goroutine must not call Go or Stream with it there.
type SerialHandler struct {
	h       http.Handler
	mu      sync.Mutex    // the lock handlers run under
	workers chan struct{} // a value per work running (Go)
	closed  atomic.Bool
	smu     sync.Mutex // guards streams
	streams map[*fallbackStream]struct{}
}

// Serial returns a SerialHandler serving h one request at a time. Under
// gameserver itself it is not needed: the loop already runs handlers one
// at a time.
func Serial(h http.Handler) *SerialHandler {
	return &SerialHandler{h: h, workers: make(chan struct{}, defaultWorkers()), streams: map[*fallbackStream]struct{}{}}
}

// serialKey is the request context key of a *serialCall.
type serialKey struct{}

// serialCall is one request served through a SerialHandler. locked is true
// while the request's handler holds the lock: between the handler's start
// and its return, except while Go's work or a stream runs unlocked.
type serialCall struct {
	s      *SerialHandler
	locked atomic.Bool
}

// ServeHTTP calls the handler with the lock held, and returns once the
// handler has returned, its Go work finished and its stream, if it opened
// one, ended. A panic in the handler releases the lock and goes on up to
// the server (net/http logs it and closes the connection).
func (s *SerialHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &serialCall{s: s}
	r = r.WithContext(context.WithValue(r.Context(), serialKey{}, c))
	s.mu.Lock()
	c.locked.Store(true)
	defer func() {
		c.locked.Store(false)
		s.mu.Unlock()
	}()
	s.h.ServeHTTP(w, r)
}

// Do runs f under the lock, one at a time with handlers and timers, on
// the calling goroutine, and returns when f has returned. A panic in f
// releases the lock and propagates to Do's caller. Do must not be called
// from a handler or a function already running under the lock: the lock
// is not reentrant, and that call would never return.
func (s *SerialHandler) Do(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// AfterFunc arranges for f to run once under the lock after d (d <= 0: at
// once), on a goroutine of its own, and returns a SerialTimer that can
// cancel it. A panic in f is logged (slog.Default) and recovered. After
// Close, timers never fire.
func (s *SerialHandler) AfterFunc(d time.Duration, f func()) *SerialTimer {
	t := &SerialTimer{s: s, f: f}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t = time.AfterFunc(d, t.fire)
	return t
}

// Every arranges for f to run under the lock every period, the first time
// one period from now, until the SerialTimer is stopped or Close is
// called. As with Server.Every, the next run is scheduled from the
// previous deadline, not from when f returned, and runs missed while f or
// the lock's holders were busy are skipped, not queued. period must be
// positive, or Every panics. A panic in f is logged (slog.Default) and
// recovered, and f runs again at the next period.
func (s *SerialHandler) Every(period time.Duration, f func()) *SerialTimer {
	if period <= 0 {
		panic("gameserver: SerialHandler.Every with non-positive period")
	}
	t := &SerialTimer{s: s, f: f, period: period, next: time.Now().Add(period)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t = time.AfterFunc(period, t.fire)
	return t
}

// Close ends the event streams open through s (each is closed as by
// EventStream.Close: its last chunk is sent and its handler returns),
// makes a stream opened later end as soon as its open function returns,
// and stops every timer of s: they never fire again. Requests are still
// served. Call it when a graceful shutdown begins, for instance with
// http.Server.RegisterOnShutdown: Shutdown waits for handlers to return,
// and a stream's handler returns only when its stream ends. Safe to call
// more than once.
func (s *SerialHandler) Close() {
	s.closed.Store(true)
	s.smu.Lock()
	streams := s.streams
	s.streams = map[*fallbackStream]struct{}{}
	s.smu.Unlock()
	for fb := range streams {
		fb.close()
	}
}

// SerialTimer is a function scheduled under a SerialHandler's lock by
// AfterFunc or Every. Its methods are safe from any goroutine.
type SerialTimer struct {
	s      *SerialHandler
	f      func()
	period time.Duration // > 0 for Every
	mu     sync.Mutex    // guards the fields below
	t      *time.Timer
	next   time.Time // Every: the deadline of the run pending
	done   bool      // stopped, or fired (AfterFunc)
}

// Stop prevents the SerialTimer from firing again. It returns true if the
// call stopped the timer, false if it had already fired (AfterFunc) or
// had already been stopped. A run due but still waiting for the lock does
// not happen; Stop does not wait for a run of f in progress.
func (t *SerialTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	t.t.Stop()
	return true
}

// fire runs f under the lock, unless the timer was stopped or its
// SerialHandler closed meanwhile, and schedules Every's next run.
func (t *SerialTimer) fire() {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	t.mu.Lock()
	if t.done || t.s.closed.Load() {
		t.done = true
		t.mu.Unlock()
		return
	}
	if t.period == 0 {
		t.done = true
	}
	t.mu.Unlock()
	t.run()
	if t.period == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	now := time.Now()
	for !t.next.After(now) {
		t.next = t.next.Add(t.period)
	}
	t.t = time.AfterFunc(t.next.Sub(now), t.fire)
}

// run calls f, logging and recovering a panic.
func (t *SerialTimer) run() {
	defer func() {
		if v := recover(); v != nil {
			slog.Default().Error("gameserver: panic in SerialHandler timer", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	t.f()
}

// serialWork runs work, Go's, with the SerialHandler lock of ctx's
// request released, if ctx is the context of a request served through a
// SerialHandler whose handler holds it now, once one of the handler's
// workers is free; it takes the lock back before returning (a panic in
// work included). It reports false, without running work, if ctx ended
// while work waited for a worker. Not through a SerialHandler, it just
// calls work.
func serialWork(ctx context.Context, work func()) bool {
	c, _ := ctx.Value(serialKey{}).(*serialCall)
	if c == nil {
		work()
		return true
	}
	ran := false
	c.unlocked(func() {
		select {
		case c.s.workers <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-c.s.workers }()
		ran = true
		work()
	})
	return ran
}

// unlocked runs f with the lock released if c's handler holds it now,
// and takes it back before returning (a panic in f included).
func (c *serialCall) unlocked(f func()) {
	if !c.locked.CompareAndSwap(true, false) {
		f()
		return
	}
	c.s.mu.Unlock()
	defer func() {
		c.s.mu.Lock()
		c.locked.Store(true)
	}()
	f()
}

// serveUnlocked serves fb, a stream opened under another server, by
// calling serve: with the lock released if the request came through a
// SerialHandler, which then also closes fb on Close. Stream's net/http
// fallback serves its streams through it, after open returned.
func serveUnlocked(ctx context.Context, fb *fallbackStream, serve func()) {
	c, _ := ctx.Value(serialKey{}).(*serialCall)
	if c == nil {
		serve()
		return
	}
	s := c.s
	s.smu.Lock()
	s.streams[fb] = struct{}{}
	s.smu.Unlock()
	defer func() {
		s.smu.Lock()
		delete(s.streams, fb)
		s.smu.Unlock()
	}()
	if s.closed.Load() {
		fb.close() // opened during shutdown: what open queued goes out, then the end
	}
	c.unlocked(serve)
}
