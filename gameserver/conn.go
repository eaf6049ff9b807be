package gameserver

import (
	"net/http"
	"net/netip"
	"time"
)

// Buffer and flow-control sizes.
const (
	readBufSize = 64 << 10  // the loop's one shared read buffer
	bufSize     = 16 << 10  // pooled output and body buffers
	maxFreeBufs = 64        // pooled buffers kept while idle (1 MiB)
	copyMax     = 4 << 10   // bodies up to this are copied behind their header; larger ones are handed over
	writeCap    = 256 << 10 // bytes written per connection per loop turn, so one client cannot starve the others
	highWater   = 128 << 10 // memory of queued output plus input behind it above which a connection's input is not served or read
	maxIovecs   = 64        // segments per writev
	lingerTime  = time.Second
)

// conn is one client connection. It stays small while idle: input is kept
// only while a request is partial, output only while it is queued.
type conn struct {
	connSys                // the back end's handle: a file descriptor, or a net.Conn
	remote    string       // "ip:port", the Request.RemoteAddr
	peer      netip.Addr   // the address c counts against in Config.MaxConnsPerAddr (see peerConns.add)
	in        []byte       // unconsumed input: a partial request, or requests waiting behind a response
	p         parser       // frames the request at the start of in
	out       outq         // response bytes not yet written
	resp      *response    // the response in progress while serving or deferred
	stream    *EventStream // the stream while streaming
	tm        timer        // this connection's entry in the deadline heap
	deadline  int64        // loop clock; 0 = none (see rearm)
	reqStart  int64        // loop clock at the first byte of the request in `in`
	readyAt   int64        // loop clock when c joined the ready queue, until its turn; 0 otherwise (see WaitStats)
	arrived   int64        // loop clock when the kernel received the bytes of a sampled turn's read (of an event a turn left: by that turn's start); 0 unknown (see WaitStats)
	writeDL   int64        // write deadline while output is queued
	writeTurn uint64       // loop turn that turnBytes counts
	turnBytes int          // bytes written during writeTurn
	dropped   int          // memory of output dropped while a write still reads it (see dropOutput)
	drainLeft int          // while the server drains: input that arrived before, not yet served as requests
	served    uint64       // loop turn in which c last started a request (its budget: one per turn)
	lru       idleLink     // c's place in the loop's list of idle connections (idle.go)
	phase     phase

	needMore   bool // `in` holds only an incomplete request: wait for input
	continued  bool // 100 Continue was sent for the current request
	nodelay    bool // TCP_NODELAY is set, or not needed (not TCP; see loop.write)
	closeAfter bool // serve no more requests; close once the output is written
	linger     bool // unread input may remain: half-close and drain before closing
	eof        bool // the client closed its write side
	broken     bool // the connection failed while its handler ran: close when it returns
	queued     bool // c is in the loop's ready queue
	marked     bool // c is in the loop's pending list (see mark)
	idleListed bool // c is in the loop's list of idle connections (see noteIdle)
}

// held reports whether a response outlives its handler on c: then nothing
// else is read from c, and a hang-up closes it at once.
func (c *conn) held() bool { return c.phase == phaseDeferred || c.phase == phaseStreaming }

// newConn returns a connection for remote, from the client address addr
// (the zero Addr if not IP); the back end fills connSys and calls opened.
func (l *loop) newConn(remote string, addr netip.Addr) *conn {
	c := &conn{remote: remote, peer: l.peers.add(addr)}
	c.p.lookup = l.prepared
	c.tm = timer{index: -1, conn: c}
	c.out.budget = &l.budget
	l.count.AcceptedConns++
	l.count.OpenConns++
	return c
}

// opened starts the clock on a freshly accepted connection: its first
// request must arrive within ReadHeaderTimeout (and, while the server
// drains, within DrainIdleTimeout, unless it has already arrived).
func (l *loop) opened(c *conn) {
	c.reqStart = l.now
	dl := after(l.now, l.cfg.ReadHeaderTimeout)
	if l.draining {
		if c.drainLeft = l.sys.unread(c); c.drainLeft == 0 {
			dl = earliest(dl, l.drainIdleDeadline())
		}
	}
	l.setDeadline(c, dl)
	l.noteIdle(c)
}

// onInput takes p, bytes just read (owned by the caller and reused after
// return), serves the complete requests and keeps the rest.
func (l *loop) onInput(c *conn, p []byte) {
	l.count.BytesRead += uint64(len(p))
	l.idle.remove(c)
	switch {
	case c.phase == phaseLingering:
		return
	case c.closeAfter:
		c.linger = true
		return
	}
	if len(c.in) == 0 {
		c.needMore = false
		rest := l.serveInput(c, p)
		if len(rest) > 0 {
			c.in = append(make([]byte, 0, max(len(rest), 1024)), rest...)
			if c.served != 0 {
				// A request after an earlier one is timed from this
				// first byte after the idle wait; a new connection's
				// first request from accept (opened), as net/http.
				c.reqStart = l.now
			}
		}
	} else {
		c.in = append(c.in, p...)
		c.needMore = false
		l.serveBuffered(c)
	}
	if c.needMore {
		c.reserveBody()
	}
	l.mark(c)
}

// reserveBody sizes c.in once for a request whose header is in and whose
// Content-Length body is not: to the whole request plus one read of what
// may follow it, instead of doubling its way there (a 10 MiB body would
// cost up to twice that). The parser has already refused a Content-Length
// over MaxBodyBytes, so this is bounded by MaxHeaderBytes + MaxBodyBytes +
// readBufSize. Small requests are left to append.
func (c *conn) reserveBody() {
	if c.p.framing != framingLength {
		return
	}
	want := c.p.bodyStart + int(c.p.req.req.ContentLength)
	if want < readBufSize || want <= cap(c.in) {
		return
	}
	in := make([]byte, len(c.in), want+readBufSize)
	copy(in, c.in)
	c.in = in
}

// serveBuffered serves the requests waiting in c.in and reports whether
// it consumed any.
func (l *loop) serveBuffered(c *conn) bool {
	rest := l.serveInput(c, c.in)
	consumed := len(rest) < len(c.in)
	if consumed {
		c.reqStart = l.now
	}
	switch {
	case len(rest) == 0:
		c.in = nil
	case consumed && cap(c.in) > 2*readBufSize && len(rest) <= readBufSize:
		// Do not keep a large body's buffer for the few bytes after it.
		c.in = append(make([]byte, 0, max(len(rest), 1024)), rest...)
	case consumed:
		c.in = c.in[:copy(c.in, rest)]
	}
	return consumed
}

// serveInput frames and serves the requests at the start of data, in order,
// and returns what it did not consume. It stops at an incomplete request,
// while a response is in progress, after a response that closes the
// connection, while queued output is over the high-water mark, or once c
// has started a request this loop turn: a client that pipelines many
// requests gets one per turn, round-robin with every other client (see
// runReady), so it cannot hold the loop for the whole batch.
func (l *loop) serveInput(c *conn, data []byte) []byte {
	for len(data) > 0 && c.ready() && c.served != l.turn {
		_, n, err := c.p.parse(data, l.lim)
		if err != nil {
			l.refuse(c, err)
			return data
		}
		if n == 0 {
			c.needMore = true
			l.maybeContinue(c)
			return data
		}
		a, hit, raw := c.p.req, c.p.hit, data[:n]
		data = data[n:]
		c.p.reset()
		c.continued = false
		c.served = l.turn
		last := false
		if l.draining {
			last = c.drainLeft <= n // the request that arrived last before the drain, or after it
			c.drainLeft -= n
		}
		if hit.resp != nil {
			l.servePrepared(c, hit, raw, last)
			continue
		}
		l.serveRequest(c, a, last)
	}
	return data
}

// idle reports whether c has nothing in progress: no response, no input,
// no output, and it may serve another request.
func (c *conn) idle() bool {
	return c.phase == phaseOpen && c.out.n == 0 && len(c.in) == 0 && !c.closeAfter
}

// ready reports whether c may start its next request.
func (c *conn) ready() bool {
	return c.phase == phaseOpen && !c.closeAfter && !c.backedUp()
}

// backedUp reports whether c's output is piling up: while output is
// pending, the memory its queue holds plus the input waiting behind it is
// over highWater, or every queue together holds more than
// Config.MaxOutputBytes. Then c reads and serves nothing more until its
// client takes output (or the total falls), so a client that pipelines
// and never reads costs at most about highWater plus one response.
func (c *conn) backedUp() bool {
	return c.out.n > 0 && (c.out.mem+cap(c.in) > highWater || c.out.budget.over())
}

// maybeContinue queues "100 Continue" once for a request whose header
// asked for it and whose body has not all arrived (RFC 9110 section
// 10.1.1).
func (l *loop) maybeContinue(c *conn) {
	if !c.continued && c.p.expectContinue() {
		c.continued = true
		c.out.write(continueLine, l)
	}
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// send writes c's queued output, serves a request that was waiting for the
// output to drain, and settles what follows: wait for EPOLLOUT, the ready
// queue, read on, linger, or close. Only flushPending calls it: the one
// place the loop writes.
func (l *loop) send(c *conn) {
	for c.phase != phaseClosed {
		if c.out.n > 0 && !l.write(c) {
			return
		}
		if !c.pendingInput() || !c.ready() || c.turnBytes >= writeCap {
			break
		}
		if !l.serveBuffered(c) {
			break
		}
	}
	l.settle(c)
}

// pendingInput reports whether c holds input that may be a complete
// request: it is served as soon as the output allows, without waiting for
// more bytes from the client.
func (c *conn) pendingInput() bool { return len(c.in) > 0 && !c.needMore }

// settle decides c's next state once output was written as far as it goes.
// A connection left with a complete request it may serve (its budget for
// the turn is spent, or writeCap is) joins the ready queue.
func (l *loop) settle(c *conn) {
	if c.phase == phaseClosed {
		return
	}
	if c.out.n == 0 && c.phase == phaseOpen {
		switch {
		case c.closeAfter:
			l.closeOrLinger(c)
			return
		case c.eof && !c.pendingInput():
			l.closeConn(c)
			return
		}
	}
	if c.pendingInput() && c.ready() && !c.queued {
		c.queued = true
		l.readyQ = append(l.readyQ, c)
		if l.wait.known {
			c.readyAt = l.clock() // its request waits from now (see WaitStats)
		}
	}
	l.sys.watch(c)
	l.rearm(c)
}

// wantRead reports whether c should be watched for input: not after its
// last request, not while a response is held, and not while output or
// complete requests are piling up.
func (c *conn) wantRead() bool {
	switch c.phase {
	case phaseLingering:
		return true
	case phaseOpen:
		return !c.eof && !c.closeAfter && !c.backedUp() && !c.pendingInput()
	}
	return false
}

// readHeld reports whether a back end that learns of a client going
// away only by reading (the portable one; epoll reports EPOLLRDHUP
// without reading) may read c now: its response is held, and the input
// kept behind it for after the response is under one read buffer. (A
// held connection's request body was copied out of the reader's buffer,
// so reading cannot overwrite it.)
//
//lint:ignore U1000 only the portable back end reads while a response is held (backend_portable.go).
func (c *conn) readHeld() bool { return c.held() && len(c.in) < readBufSize }

// wantWrite reports whether c should be watched for writability: while
// output is queued. (Requests waiting for the next turn's budget are in
// the ready queue instead.)
func (c *conn) wantWrite() bool { return c.out.n > 0 }

// rearm sets c's one deadline from its state: write timeout while output
// is queued, read-header timeout while a request is partial (counted from
// its first byte), idle timeout otherwise. A response in progress has
// none of those: a stream lives until it is closed, and a handler that
// is running cannot be interrupted anyway.
func (l *loop) rearm(c *conn) {
	var dl int64
	switch {
	case c.phase == phaseLingering:
		return
	case c.out.n > 0:
		dl = c.writeDL
	case c.phase == phaseDeferred:
		dl = c.resp.deferDL
	case c.phase != phaseOpen:
	case len(c.in) > 0:
		dl = after(c.reqStart, l.cfg.ReadHeaderTimeout)
	default:
		dl = after(l.now, l.cfg.IdleTimeout)
		if l.draining {
			dl = earliest(dl, l.drainIdleDeadline())
		}
	}
	l.setDeadline(c, dl)
	l.noteIdle(c)
}

// closeOrLinger ends c after its last response. If input may remain
// unread, closing now could make the kernel reset the connection and
// destroy the response before the client reads it, so c half-closes and
// discards input until EOF or lingerTime (as net/http does; RFC 9112
// section 9.6). While the server drains, c always lingers: a pipelining
// client that has not yet read the Connection: close keeps sending, and
// a request arriving after an immediate close would reset the
// connection and destroy the responses still on their way.
func (l *loop) closeOrLinger(c *conn) {
	if l.draining {
		c.linger = true
	}
	if !c.linger && len(c.in) == 0 {
		l.closeConn(c)
		return
	}
	c.in = nil
	l.enter(c, phaseLingering)
	if !l.sys.shutdownWrite(c) {
		l.closeConn(c)
		return
	}
	l.sys.watch(c)
	l.setDeadline(c, l.now+int64(lingerTime))
}

// onEOF handles the client closing its write side: responses already
// due are still written, then the connection closes. A client that
// closes while its response is held has gone (as net/http judges it).
func (l *loop) onEOF(c *conn) {
	if c.phase == phaseLingering || c.held() {
		l.closeConn(c)
		return
	}
	c.eof = true
	l.mark(c)
}

// onHangup handles a connection that is gone: reset, failed, or shut in
// both directions. Nothing queued can reach the client any more.
func (l *loop) onHangup(c *conn) { l.closeConn(c) }

// onWritable handles the socket taking output again.
func (l *loop) onWritable(c *conn) { l.mark(c) }

// expire handles c's deadline passing: a deferred response that waited
// for its Finish too long is answered 503; an idle connection of a
// draining server first reads what its socket holds, and a request found
// there is served (with "Connection: close"); otherwise the connection
// closes, dropping any queued output.
func (l *loop) expire(c *conn) {
	switch {
	case c.phase == phaseDeferred && c.out.n == 0:
		l.deferExpired(c)
		return
	case l.draining && c.idle():
		l.sys.readNow(c)
		if c.phase == phaseClosed || !c.idle() {
			return
		}
	}
	l.closeConn(c)
}

// closeConn closes c now, dropping queued output. While c's handler runs
// the close waits for it to return (c.broken).
func (l *loop) closeConn(c *conn) {
	switch c.phase {
	case phaseClosed:
		return
	case phaseServing:
		c.broken = true
		l.dropOutput(c)
		return
	case phaseDeferred:
		l.dropDeferred(c)
	case phaseStreaming:
		l.endStream(c)
	}
	l.sys.closeConn(c)
	l.enter(c, phaseClosed)
	l.dropOutput(c)
	c.in = nil
	l.unschedule(&c.tm)
	c.deadline = 0
}

// dropOutput empties c's output queue. Buffers a write in flight still
// reads (portable back end) are left to the garbage collector, not pooled,
// and stay counted in the output budget until the write ends
// (writeEnded): until then they are not garbage, and the budget's release
// must not give memory back before they are.
func (l *loop) dropOutput(c *conn) {
	if c.writeInFlight() {
		c.out.segs = nil // not reused either
		c.dropped += c.out.mem
		c.out.mem = 0 // counted in c.dropped now, not released
		c.out.abandon()
		return
	}
	c.out.reset(l)
}

// writeEnded is a back end's report that an asynchronous write on c,
// closed meanwhile, has ended: the output dropped under it is garbage now.
//
//lint:ignore U1000 only the portable back end writes asynchronously (backend_portable.go).
func (l *loop) writeEnded(c *conn) {
	l.budget.mem -= c.dropped
	c.dropped = 0
}

// serveRequest runs the handler for the request in a and completes its
// response, unless the handler took the response out of its call (Defer,
// Stream). The last request of a draining connection is answered with
// "Connection: close".
func (l *loop) serveRequest(c *conn, a *requestAlloc, last bool) {
	req := &a.req
	req.RemoteAddr = c.remote
	a.ctx.parent = l.baseCtx
	*req = *req.WithContext(&a.ctx)
	w := l.startResponse(c, req)
	if last {
		w.closeAfter = true
	}
	w.ctx, w.reqBody = &a.ctx, &a.body
	l.call(w, func(rw http.ResponseWriter) { l.runHandler(rw, req) })
	l.called(c, w)
}

// called settles c after its handler (or a Finish function) returned:
// the response ends, unless it was deferred (the handler's writer is cut
// off: Finish gets a new one) or became a stream (w is recycled already).
func (l *loop) called(c *conn, w *response) {
	switch c.phase {
	case phaseServing:
		l.finishResponse(w)
	case phaseDeferred:
		w.detach()
	}
}

// refuse answers a request the parser rejected and ends the connection.
func (l *loop) refuse(c *conn, err error) {
	pe, ok := err.(*protoError)
	if !ok {
		pe = &protoError{status: http.StatusBadRequest, msg: err.Error()}
	}
	c.linger = true
	w := l.startResponse(c, nil)
	w.closeAfter = true
	w.refuse(pe.status, pe.msg)
	l.finishResponse(w)
}

// startResponse makes w the response in progress on c (open -> serving).
func (l *loop) startResponse(c *conn, req *http.Request) *response {
	var w *response
	if n := len(l.resps); n > 0 {
		w = l.resps[n-1]
		l.resps = l.resps[:n-1]
	} else {
		w = &response{l: l, header: make(http.Header)}
	}
	w.c, w.req, w.declared = c, req, -1
	w.proto11 = req == nil || req.ProtoAtLeast(1, 1)
	w.head = req != nil && req.Method == http.MethodHead
	c.resp = w
	l.enter(c, phaseServing)
	l.count.Requests++
	return w
}

// call runs f, a handler or a Finish function, with a new writer for w; a
// panic becomes a 500 response (or a closed connection if the header is
// already out) and a log entry with the stack, and the loop carries on.
// A call over Config.SlowRequest goes to the slow-request log.
func (l *loop) call(w *response, f func(http.ResponseWriter)) {
	c := w.c
	phase := phaseHandler
	if w.deferred != nil {
		phase = phaseFinish // of a response deferred by an earlier call
	}
	defer func() {
		if v := recover(); v != nil {
			switch c.phase {
			case phaseStreaming:
				// The response became a stream (w is recycled): the
				// stream ends with its connection.
				l.logPanic(c, v)
				l.closeConn(c)
				return
			case phaseDeferred:
				l.undefer(w) // a panic after Defer: the 500 is the response
			}
			l.handlerPanic(w, v)
		}
	}()
	l.timed(phase, c, w.req, func() { f(w.handle()) })
}

// runHandler calls the Handler.
func (l *loop) runHandler(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodOptions && req.RequestURI == "*" {
		// A question to the server itself (RFC 9110 section 9.3.7), which
		// a ServeMux would refuse: answered as net/http answers it.
		w.Header()["Content-Length"] = []string{"0"}
		return
	}
	l.cfg.Handler.ServeHTTP(w, req)
}

// finishResponse completes the response in progress on its connection
// (serving or deferred -> open): the rest of it goes to the output, and
// the connection may start its next request. It is the one place a
// response ends.
func (l *loop) finishResponse(w *response) {
	c := w.c
	if !w.wroteHeader {
		w.commit(http.StatusOK)
	}
	if !c.broken && !w.aborted {
		w.emit(true)
	}
	if w.closeAfter {
		c.closeAfter = true
	}
	l.count.countResponse(w.status)
	if l.access != nil {
		l.access.record(logRemote(c.remote, w.req), w.req, w.status, w.sent)
	}
	if w.ctx != nil {
		w.ctx.cancel()
	}
	c.resp = nil
	l.enter(c, phaseOpen)
	l.recycle(w)
	if c.broken {
		l.closeConn(c)
		return
	}
	l.mark(c)
}

// recycle returns w to the pool with its buffers emptied.
func (l *loop) recycle(w *response) {
	w.detach() // a writer the handler kept must not reach the next response
	clear(w.header)
	clear(w.keys)
	w.dropBody()
	*w = response{l: l, header: w.header, hdr: w.hdr[:0], keys: w.keys[:0], body: w.body, spill: w.spill}
	if len(l.resps) < 4 {
		l.resps = append(l.resps, w)
	}
}
