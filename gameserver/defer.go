package gameserver

import (
	"bytes"
	"net/http"
	"sync/atomic"
)

// Deferred is a response taken out of its handler by Defer, to be written
// later by Finish. Its methods are safe from any goroutine.
type Deferred struct {
	l        *loop
	w        *response   // the response while it waits; nil once it ended (loop-owned)
	finished atomic.Bool // Finish was called
}

// Defer takes the response out of the handler call, so that the handler
// can return at once and the response be written later, by Finish, on the
// loop goroutine. Call it from the handler, with the ResponseWriter the
// handler was given; anything the handler writes before returning is part
// of the response (a Flush sends it at once). After the handler returns,
// that ResponseWriter is cut off as usual, but the request stays valid
// until the response ends: its body is copied out of the server's buffers,
// and its context (r.Context()) is canceled when the response ends or the
// client goes away.
//
// While a response is deferred its connection reads and serves nothing
// more (pipelined requests wait, in order), and other connections are
// served as usual. A deferred response is answered 503 Service
// Unavailable, and logged, if Finish is not called within
// Config.DeferTimeout (if its header was already flushed, the connection
// is closed instead). If the client closes its connection first (or
// only its sending side: as net/http, the server takes that for a client
// that has gone), the request's context is canceled, the connection is
// closed at once and a later Finish does nothing. Shutdown waits for
// deferred responses, up to its context, as for any response in progress;
// when the context ends (or on Close) those still deferred are answered 503
// Service Unavailable, as far as their sockets take it at once, and closed
// (the portable back end only closes them).
//
// Defer reports false, and does nothing, when w is not a gameserver
// ResponseWriter (under net/http or httptest, for instance), or when its
// response is already deferred, streaming or ended. A handler meant to
// run under other servers too answers inline then:
//
//	d, ok := gameserver.Defer(w)
//	if !ok {
//		answer(w, slowWork()) // net/http: a goroutine per request anyway
//		return
//	}
//	go func() {
//		v := slowWork()
//		d.Finish(func(w http.ResponseWriter) { answer(w, v) })
//	}()
func Defer(w http.ResponseWriter) (*Deferred, bool) {
	r := responseOf(w)
	if r == nil || r.c.phase != phaseServing || r.c.broken || r.req == nil {
		return nil, false
	}
	r.l.deferResponse(r)
	return r.deferred, true
}

// responseOf returns the response behind a gameserver ResponseWriter that
// is still in its handler, or nil.
func responseOf(w http.ResponseWriter) *response {
	h, ok := w.(*writer)
	if !ok || h.w == nil {
		return nil
	}
	return h.w
}

// Finish writes the deferred response: f runs on the loop goroutine, one
// at a time with handlers, timers and posted functions, and writes the
// response to the ResponseWriter it is given, which is valid only until f
// returns, as in a handler. When f returns the response ends (with an
// exact Content-Length unless f flushed) and the connection serves its
// next request. A panic in f is logged and answered 500, or closes the
// connection if the header was already sent; the loop carries on.
//
// Finish is safe from any goroutine, including the loop (f then runs
// after the calling function returns, never inside it). Only the first
// call counts. Finish does nothing, and f never runs, once the response
// has ended otherwise: the client went away, DeferTimeout passed, or the
// server stopped.
func (d *Deferred) Finish(f func(w http.ResponseWriter)) {
	if f == nil || d.finished.Swap(true) {
		return
	}
	d.l.post(func() { d.l.finishDeferred(d, f) })
}

// deferResponse moves r's connection from serving to deferred.
func (l *loop) deferResponse(r *response) {
	c := r.c
	if r.reqBody != nil && len(r.reqBody.b) > 0 {
		// The body points into the shared read buffer, the connection's
		// input, or the chunked decoder's reused buffer: all hold other
		// bytes by the time the response is finished.
		r.reqBody.b = bytes.Clone(r.reqBody.b)
	}
	r.deferred = &Deferred{l: l, w: r}
	r.deferDL = after(l.now, l.cfg.DeferTimeout)
	l.enter(c, phaseDeferred)
}

// finishDeferred runs a Finish function on the loop and ends the response.
func (l *loop) finishDeferred(d *Deferred, f func(http.ResponseWriter)) {
	w := d.w
	if w == nil {
		return
	}
	d.w = nil
	c := w.c
	l.enter(c, phaseServing)
	l.call(w, f)
	l.called(c, w)
}

// undefer takes back a Defer whose handler then panicked.
func (l *loop) undefer(w *response) {
	w.deferred.w = nil
	l.enter(w.c, phaseServing)
}

// deferExpired answers a deferred response that DeferTimeout overtook.
func (l *loop) deferExpired(c *conn) {
	w := c.resp
	l.cfg.Logger.Error("gameserver: deferred response not finished within DeferTimeout; sent 503",
		"remote", c.remote, "method", w.req.Method, "path", w.req.URL.Path, "timeout", l.cfg.DeferTimeout)
	l.answerUnavailable(c)
}

// answerUnavailable ends c's deferred response with 503 Service
// Unavailable (or, if its header was sent, by closing the connection
// after what was sent); a later Finish does nothing.
func (l *loop) answerUnavailable(c *conn) {
	w := c.resp
	w.deferred.w = nil
	l.enter(c, phaseServing)
	if w.headerSent {
		w.aborted, w.closeAfter = true, true
	} else {
		w.reset()
		w.refuse(http.StatusServiceUnavailable, "Service Unavailable")
	}
	l.finishResponse(w)
}

// dropDeferred ends a deferred response whose connection is closing: the
// client went away or the server stops. A later Finish does nothing.
func (l *loop) dropDeferred(c *conn) {
	w := c.resp
	w.deferred.w = nil
	if w.ctx != nil {
		w.ctx.cancel()
	}
	c.resp = nil
	l.recycle(w)
}
