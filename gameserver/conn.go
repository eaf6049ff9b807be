package gameserver

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Buffer and flow-control sizes.
const (
	readBufSize = 64 << 10  // the loop's one shared read buffer
	bufSize     = 16 << 10  // pooled output and body buffers
	maxFreeBufs = 64        // pooled buffers kept while idle (1 MiB)
	copyMax     = 4 << 10   // bodies up to this are copied behind their header; larger ones are handed over
	writeCap    = 256 << 10 // bytes written per connection per loop turn, so one client cannot starve the others
	highWater   = 1 << 20   // queued output above which a connection's input is not served or read
	maxIovecs   = 64        // segments per writev
	lingerTime  = time.Second
)

// core is the part of the loop shared by both back ends: configuration,
// timers, the post queue, counters and the connection logic in this file.
// Everything in it but q, stoppedTimers and pub is owned by the loop
// goroutine.
type core struct {
	srv   *Server
	cfg   *Config
	lim   limits
	epoch time.Time
	wake  func() // makes the loop's wait return; safe from any goroutine
	done  chan struct{}

	baseCtx    context.Context // parent of every request's context; canceled when the loop stops
	baseCancel context.CancelFunc

	q             postQueue
	serving       atomic.Bool  // Serve was called
	loopID        atomic.Int64 // the loop's OS thread (Linux) or goroutine id; see onLoop
	timers        timerHeap
	timerSeq      uint64
	stoppedTimers atomic.Int64

	now       int64  // loop clock at the start of this turn
	turn      uint64 // loop turns so far
	dateSec   int64  // wall-clock second dateField was formatted for
	dateField []byte // "Date: ...\r\n", refreshed once per second
	draining  bool   // Shutdown has begun: finish what is in flight, accept nothing

	readyQ     []*conn // connections with complete requests left over, served next turn (FIFO)
	readySpare []*conn // the previous turn's queue, reused

	free     [][]byte    // pooled bufSize buffers
	resps    []*response // pooled response writers
	scratch  []byte
	count    counters
	pub      statsBox
	access   *accessLog
	acceptOK bool // the last accept succeeded (log accept errors once per episode)
}

// initCore sets up the shared part for s.
func (c *core) initCore(s *Server, wake func()) {
	c.srv, c.cfg, c.wake = s, &s.cfg, wake
	c.lim = limits{maxHeaderBytes: s.cfg.MaxHeaderBytes, maxBodyBytes: s.cfg.MaxBodyBytes}
	c.epoch = time.Now()
	c.done = make(chan struct{})
	c.baseCtx, c.baseCancel = context.WithCancel(context.Background())
	c.acceptOK = true
	if s.cfg.AccessLog != nil {
		c.access = &accessLog{w: s.cfg.AccessLog}
	}
}

// startTurn notes the time at the start of a loop turn and refreshes the
// cached Date field once per second.
func (c *core) startTurn(wall time.Time) {
	c.now = int64(wall.Sub(c.epoch))
	c.turn++
	if sec := wall.Unix(); sec != c.dateSec {
		c.dateSec = sec
		c.dateField = append(c.dateField[:0], "Date: "...)
		c.dateField = wall.UTC().AppendFormat(c.dateField, http.TimeFormat)
		c.dateField = append(c.dateField, "\r\n"...)
		if c.access != nil {
			c.access.setDate(wall)
		}
	}
}

// conn is one client connection. It stays small while idle: input is kept
// only while a request is partial, output only while it is queued.
type conn struct {
	connSys             // the back end's handle: a file descriptor, or a net.Conn
	remote    string    // "ip:port", the Request.RemoteAddr
	in        []byte    // unconsumed input: a partial request, or requests waiting behind a response
	p         parser    // frames the request at the start of in
	out       outq      // response bytes not yet written
	resp      *response // the response in progress, nil between requests
	tm        timer     // this connection's entry in the deadline heap
	deadline  int64     // loop clock; 0 = none (see rearm)
	reqStart  int64     // loop clock at the first byte of the request in `in`
	writeDL   int64     // write deadline while output is queued
	turnBytes int       // bytes written during turn
	served    uint64    // loop turn in which c last started a request (its budget: one per turn)

	needMore   bool // `in` holds only an incomplete request: wait for input
	continued  bool // 100 Continue was sent for the current request
	closeAfter bool // serve no more requests; close once the output is written
	linger     bool // unread input may remain: half-close and drain before closing
	lingering  bool // write side shut down, discarding input until EOF
	eof        bool // the client closed its write side
	broken     bool // the connection failed while a handler held it
	queued     bool // c is in the loop's ready queue
	closed     bool
}

// onInput takes p, bytes just read (owned by the caller and reused after
// return), serves the complete requests and keeps the rest.
func (l *loop) onInput(c *conn, p []byte) {
	l.count.bytesRead += uint64(len(p))
	if c.lingering || c.closeAfter {
		c.linger = true
		return
	}
	if len(c.in) == 0 {
		c.needMore = false
		rest := l.serveInput(c, p)
		if len(rest) > 0 {
			c.in = append(make([]byte, 0, max(len(rest), 1024)), rest...)
			c.reqStart = l.now
		}
	} else {
		c.in = append(c.in, p...)
		c.needMore = false
		l.serveBuffered(c)
	}
	if c.needMore {
		c.reserveBody()
	}
	l.send(c)
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
		req, n, err := c.p.parse(data, l.lim)
		if err != nil {
			l.refuse(c, err)
			return data
		}
		if req == nil {
			c.needMore = true
			l.maybeContinue(c)
			return data
		}
		data = data[n:]
		c.p.reset()
		c.continued = false
		c.served = l.turn
		l.serveRequest(c, req)
	}
	return data
}

// ready reports whether c may start its next request.
func (c *conn) ready() bool {
	return c.resp == nil && !c.closeAfter && !c.broken && c.out.n <= highWater
}

// maybeContinue sends "100 Continue" once for a request whose header asked
// for it and whose body has not all arrived (RFC 9110 section 10.1.1).
func (l *loop) maybeContinue(c *conn) {
	if !c.continued && c.p.expectContinue() {
		c.continued = true
		c.out.write(continueLine, &l.core)
	}
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// serveRequest runs the handler for req and completes its response.
func (l *loop) serveRequest(c *conn, req *http.Request) {
	req.RemoteAddr = c.remote
	*req = *req.WithContext(l.baseCtx)
	w := l.startResponse(c, req)
	l.runHandler(w, req)
	l.finishResponse(w)
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

// startResponse makes w the response in progress on c.
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
	l.count.requests++
	return w
}

// runHandler calls the Handler; a panic becomes a 500 response (or a closed
// connection if the header is already out) and a log entry with the stack,
// and the loop carries on.
func (l *loop) runHandler(w *response, req *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			l.handlerPanic(w, v)
		}
	}()
	if req.Method == http.MethodOptions && req.RequestURI == "*" {
		// A question to the server itself (RFC 9110 section 9.3.7), which
		// a ServeMux would refuse: answered as net/http answers it.
		w.header["Content-Length"] = []string{"0"}
		return
	}
	l.cfg.Handler.ServeHTTP(w.handle(), req)
}

// finishResponse completes the response in progress on its connection:
// the rest of it goes to the output, and the connection may start its next
// request. Today it runs when ServeHTTP returns; it is the one place a
// response ends, so a response finished later on the loop can call it too
// (followed by send).
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
	if l.access != nil {
		l.access.record(logRemote(c.remote, w.req), w.req, w.status, w.sent)
	}
	c.resp = nil
	l.recycle(w)
	if c.broken {
		l.closeConn(c)
	}
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

// send writes c's queued output, serves a request that was waiting for the
// output to drain, and settles what follows: wait for EPOLLOUT, the ready
// queue, read on, linger, or close.
func (l *loop) send(c *conn) {
	for !c.closed && !c.broken {
		if c.out.n > 0 && !l.write(c) {
			return
		}
		if c.out.n > highWater || !c.pendingInput() || !c.ready() || c.turnBytes >= writeCap {
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
	if c.closed || c.broken {
		return
	}
	if c.out.n == 0 && c.resp == nil {
		switch {
		case c.lingering:
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
	}
	l.watch(c)
	l.rearm(c)
}

// runReady gives each connection queued by the previous turn its next
// request, in the order they were queued; one that still has more joins
// the queue again, behind the connections queued meanwhile. The back end
// calls it once per turn, after the turn's readiness events, and does not
// sleep while the queue is not empty.
func (l *loop) runReady() {
	q := l.readyQ
	l.readyQ = l.readySpare[:0]
	for i, c := range q {
		q[i] = nil
		c.queued = false
		if !c.closed {
			l.send(c)
		}
	}
	l.readySpare = q[:0]
}

// wantRead reports whether c should be watched for input: not after its
// last request, and not while output or complete requests are piling up.
func (c *conn) wantRead() bool {
	if c.lingering {
		return true
	}
	return !c.eof && !c.closeAfter && c.out.n <= highWater && !c.pendingInput()
}

// rearm sets c's one deadline from its state: write timeout while output
// is queued, read-header timeout while a request is partial (counted from
// its first byte), idle timeout otherwise.
func (l *loop) rearm(c *conn) {
	var dl int64
	switch {
	case c.lingering:
		return
	case c.out.n > 0:
		dl = c.writeDL
	case c.resp != nil:
		// A response in progress (flushed, not finished) is the
		// handler's to end: no read or idle deadline meanwhile.
	case len(c.in) > 0:
		dl = after(c.reqStart, l.cfg.ReadHeaderTimeout)
	default:
		dl = after(l.now, l.cfg.IdleTimeout)
	}
	l.setDeadline(c, dl)
}

// closeOrLinger ends c after its last response. If input may remain
// unread, closing now could make the kernel reset the connection and
// destroy the response before the client reads it, so c half-closes and
// discards input until EOF or lingerTime (as net/http does).
func (l *loop) closeOrLinger(c *conn) {
	if !c.linger && len(c.in) == 0 {
		l.closeConn(c)
		return
	}
	c.in = nil
	c.lingering = true
	if !l.shutdownWrite(c) {
		l.closeConn(c)
		return
	}
	l.watch(c)
	l.setDeadline(c, l.now+int64(lingerTime))
}

// onEOF handles the client closing its write side: responses already
// due are still written, then the connection closes.
func (l *loop) onEOF(c *conn) {
	if c.lingering {
		l.closeConn(c)
		return
	}
	c.eof = true
	l.send(c)
}

// expire handles c's deadline passing: the connection closes, dropping
// any queued output.
func (l *loop) expire(c *conn) { l.closeConn(c) }

// release drops c's buffers and its deadline; the back end closes the
// socket.
func (l *loop) release(c *conn) {
	c.closed = true
	c.out.reset(&l.core)
	c.in = nil
	l.unschedule(&c.tm)
	c.deadline = 0
}

// drainIdle closes the connections that have nothing in flight and marks
// the others to close after their current response (Shutdown).
func (l *loop) drainIdle(c *conn) {
	if c.served == 0 && c.resp == nil {
		// Accepted, but no request begun yet: it may be on its way (the
		// client connected just before the listener closed, and cannot
		// retry on a connection never used). Its first request is served,
		// with "Connection: close" as every response while draining, or
		// ReadHeaderTimeout ends the wait.
		return
	}
	c.closeAfterIdle()
	if c.resp == nil && c.out.n == 0 && len(c.in) == 0 {
		l.closeConn(c)
	}
}

// closeAfterIdle makes c close after the requests already received.
func (c *conn) closeAfterIdle() {
	if len(c.in) == 0 && c.resp == nil {
		c.closeAfter = true
	}
}

// newConn returns a connection for remote; the back end fills connSys.
func (l *loop) newConn(remote string) *conn {
	c := &conn{remote: remote}
	c.tm = timer{index: -1, conn: c}
	l.count.accepted++
	l.count.open++
	return c
}

// getBuf returns an empty pooled buffer of capacity bufSize.
func (c *core) getBuf() []byte {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b
	}
	return make([]byte, 0, bufSize)
}

// putBuf returns b to the pool if it came from there.
func (c *core) putBuf(b []byte) {
	if cap(b) == bufSize && len(c.free) < maxFreeBufs {
		c.free = append(c.free, b[:0])
	}
}

// outq is a connection's queued output: a list of segments written with
// write or writev. Small pieces are copied into pooled bufSize buffers;
// large bodies are handed over whole (take), never copied.
type outq struct {
	segs     [][]byte // segs[head][off:] is the next byte to send
	head     int
	off      int
	n        int  // bytes queued
	tailOpen bool // the last segment is a pooled buffer that write may append to
}

// write queues a copy of p.
func (q *outq) write(p []byte, c *core) {
	q.n += len(p)
	for len(p) > 0 {
		if !q.tailOpen || len(q.segs[len(q.segs)-1]) == bufSize {
			q.segs = append(q.segs, c.getBuf())
			q.tailOpen = true
		}
		tail := &q.segs[len(q.segs)-1]
		k := min(len(p), bufSize-len(*tail))
		*tail = append(*tail, p[:k]...)
		p = p[k:]
	}
}

// push queues buf itself, handing it over: it goes back to the pool once
// written.
func (q *outq) push(buf []byte) {
	if len(buf) == 0 {
		return
	}
	q.segs = append(q.segs, buf)
	q.n += len(buf)
	q.tailOpen = false
}

// iovecs returns up to maxIovecs segments holding at most limit bytes from
// the head of the queue, appended to dst.
func (q *outq) iovecs(dst [][]byte, limit int) [][]byte {
	off := q.off
	for _, s := range q.segs[q.head:] {
		if len(dst) == maxIovecs || limit <= 0 {
			break
		}
		s = s[off:]
		off = 0
		if len(s) > limit {
			s = s[:limit]
		}
		dst = append(dst, s)
		limit -= len(s)
	}
	return dst
}

// consume drops n written bytes, returning emptied buffers to the pool.
func (q *outq) consume(n int, c *core) {
	q.n -= n
	for n > 0 {
		rest := len(q.segs[q.head]) - q.off
		if n < rest {
			q.off += n
			return
		}
		n -= rest
		c.putBuf(q.segs[q.head])
		q.segs[q.head] = nil
		q.head++
		q.off = 0
	}
	if q.head == len(q.segs) {
		q.segs, q.head, q.tailOpen = q.segs[:0], 0, false
	}
}

// reset drops everything queued.
func (q *outq) reset(c *core) {
	for _, s := range q.segs[q.head:] {
		c.putBuf(s)
	}
	clear(q.segs)
	*q = outq{segs: q.segs[:0]}
}
