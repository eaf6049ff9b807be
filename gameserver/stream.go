package gameserver

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// DefaultStreamBuffer applies when Config.StreamBuffer is 0, and to every
// stream served through the net/http fallback: 256 KiB.
const DefaultStreamBuffer = 256 << 10

// ErrStreamClosed is returned by an EventStream's Write once the stream
// has ended: closed by Close or Shutdown, cut off at its StreamBuffer, or
// gone with its client.
var ErrStreamClosed = errors.New("gameserver: event stream closed")

// ErrTooManyStreams is returned by Stream when Config.MaxStreams streams
// are open already. Stream then sends nothing: the handler answers, for
// example 503 Service Unavailable with a Retry-After field.
var ErrTooManyStreams = errors.New("gameserver: too many event streams open (Config.MaxStreams)")

// EventStream is a response kept open after its handler returned, to
// which events are written as they happen: server-sent events (WHATWG
// HTML, "Server-sent events"), or long polling. Create one with Stream;
// write whole events with WriteEvent (or Broadcast an Event's
// MarshalText to many streams), or bytes framed by the caller with
// Write; learn that it ended with OnClose.
//
// Under gameserver its methods must be called on the loop goroutine:
// from a handler, a timer (AfterFunc, Every) or a posted function; they
// only queue bytes, which the loop writes at the end of its turn. Under
// the net/http fallback (see Stream) they are safe from any goroutine.
//
// A client that does not read is bounded as Redis bounds its pub/sub
// clients: once the output queued for the stream holds more than
// Config.StreamBuffer bytes of memory, it is cut off (its connection
// closed, Stats.StreamsCut counted).
// Streams have no IdleTimeout; to keep proxies and clients that time out
// quiet connections from dropping it, send a comment line (":\n\n") every
// 15 to 30 seconds, as is usual for server-sent events.
type EventStream struct {
	l     *loop
	c     *conn         // nil once the stream ended
	req   *http.Request // for the access log
	ctx   *reqCtx
	frame frame // frameChunked (HTTP/1.1) or frameClose (HTTP/1.0)
	sent  int64 // event bytes queued
	fb    *fallbackStream
	ended []func() // OnClose's functions, run when the stream ends
}

// Stream turns the response on w into an event stream. It sends the
// header at once (status 200, "Content-Type: text/event-stream" and
// "Cache-Control: no-cache" unless the handler set them), calls open with
// the stream, so the caller can keep it where loop code finds it (a set
// of subscribers), and returns. The body is chunked for an HTTP/1.1
// client and delimited by closing the connection for an HTTP/1.0 one. For
// a HEAD request Stream sends the header only, ends the response and
// returns nil without calling open. After Stream, w is no longer usable:
// write to the stream.
//
// Under gameserver, Stream returns at once: the handler returns and the
// stream outlives it, like a deferred response (see Defer): its
// connection reads and serves nothing more until the stream is closed,
// and the request's context is canceled when the stream ends. Close ends
// it with the last chunk and the connection carries on; Shutdown closes
// every stream that way, and a stream opened once Shutdown has begun is
// closed as soon as open returns. A client that goes away closes its
// stream. After Close, Shutdown or the client's going, the stream's
// methods do nothing and Write returns ErrStreamClosed.
//
// Under another server (net/http, httptest), when w is an http.Flusher,
// Stream serves the stream itself: it calls open, then holds the handler,
// writing and flushing what is written to the stream from any goroutine,
// until the stream is closed, cut off at DefaultStreamBuffer, or the
// request's context ends. The same handler thus works on both. Through a
// SerialHandler, open runs under its lock and the stream is served with
// the lock released; SerialHandler.Close closes it.
//
// Stream returns ErrTooManyStreams, and does nothing, when
// Config.MaxStreams streams are open already (the net/http fallback has no
// such cap). It returns another error, and does nothing, when the
// response's header was already written, when w is neither a gameserver ResponseWriter in
// its handler nor an http.Flusher, or when the response is already
// deferred or streaming.
func Stream(w http.ResponseWriter, r *http.Request, open func(s *EventStream)) error {
	if _, ok := w.(*writer); !ok {
		return streamFallback(w, r, open)
	}
	resp := responseOf(w)
	switch {
	case resp == nil || resp.c.phase != phaseServing:
		return errors.New("gameserver: Stream on a response that is not in its handler, deferred or streaming already")
	case resp.wroteHeader:
		return errors.New("gameserver: Stream after the response's header was written")
	}
	if lim := resp.l.cfg.MaxStreams; lim > 0 && resp.l.count.Streams >= lim {
		resp.l.count.StreamsRefused++
		return ErrTooManyStreams
	}
	streamHeader(resp.header)
	resp.WriteHeader(http.StatusOK)
	if resp.head {
		return nil // the response ends with the handler: header only
	}
	l := resp.l
	es := l.startStream(resp)
	open(es)
	if l.draining {
		es.Close()
	}
	return nil
}

// streamHeader sets the event stream's header fields the handler left
// unset.
func streamHeader(h http.Header) {
	delete(h, "Content-Length")
	delete(h, "Transfer-Encoding")
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = []string{"text/event-stream"}
	}
	if _, ok := h["Cache-Control"]; !ok {
		h["Cache-Control"] = []string{"no-cache"}
	}
}

// startStream sends w's header and whatever its handler wrote, and moves
// its connection from serving to streaming; the response itself is
// recycled, and the handler's writer cut off.
func (l *loop) startStream(w *response) *EventStream {
	c := w.c
	w.emit(false)
	s := &EventStream{l: l, c: c, req: w.req, ctx: w.ctx, frame: w.frame, sent: w.sent}
	if w.closeAfter {
		c.closeAfter = true
	}
	c.stream, c.resp = s, nil
	l.enter(c, phaseStreaming)
	w.ctx = nil
	l.recycle(w)
	l.mark(c)
	return s
}

// Write queues p, a copy of it, as the next bytes of the stream: usually
// one or more whole events ("data: ...\n\n"; WriteEvent frames one from
// its fields). It returns ErrStreamClosed once the stream has ended,
// including when this write takes it over its StreamBuffer.
func (s *EventStream) Write(p []byte) (int, error) {
	if s.fb != nil {
		return s.fb.write(p, false)
	}
	if s.c == nil {
		return 0, ErrStreamClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	out, l := &s.c.out, s.l
	if s.frame == frameChunked {
		out.write(s.l.chunkHeader(len(p)), l)
		out.write(p, l)
		out.write(crlf, l)
	} else {
		out.write(p, l)
	}
	return len(p), s.queued(len(p))
}

// WriteString is Write for a string.
func (s *EventStream) WriteString(p string) (int, error) { return s.Write([]byte(p)) }

// queued accounts for n event bytes just queued and cuts the stream off
// if its output holds more than StreamBuffer of memory (outq.held).
func (s *EventStream) queued(n int) error {
	l, c := s.l, s.c
	s.sent += int64(n)
	if lim := l.cfg.StreamBuffer; lim > 0 && c.out.held() > lim {
		l.count.StreamsCut++
		l.closeConn(c)
		return ErrStreamClosed
	}
	l.mark(c)
	return nil
}

// Close ends the stream: an HTTP/1.1 stream gets its last chunk and its
// connection serves its next request; an HTTP/1.0 one is closed once its
// output is written. Closing a stream that has ended does nothing.
func (s *EventStream) Close() {
	if s.fb != nil {
		s.fb.close()
		return
	}
	c := s.c
	if c == nil {
		return
	}
	if s.frame == frameChunked {
		c.out.write(lastChunk, s.l)
	} else {
		c.closeAfter = true
	}
	s.l.endStream(c)
	s.l.enter(c, phaseOpen)
	s.l.mark(c)
}

// OnClose arranges for f to run once the stream has ended, however it
// ended (Close, Shutdown, cut off at its StreamBuffer, or gone with its
// client), so its owner can forget it without polling Closed. Functions
// run in the order given, each once.
//
// Under gameserver f runs on the loop goroutine, after the function in
// which the stream ended returns (so it may change a set of streams that
// function was going through, as Broadcast does), before the loop writes
// the turn's output; if the stream has ended already, after the function
// calling OnClose returns. A panic in f is logged and the loop carries
// on. Under the net/http fallback (see Stream) f runs on the stream's
// handler goroutine as the handler returns, under a SerialHandler's lock
// if it came through one; if the stream has ended already, at once.
func (s *EventStream) OnClose(f func()) {
	if s.fb != nil {
		s.fb.onClose(f)
		return
	}
	if s.c == nil {
		s.l.ended = append(s.l.ended, f)
		return
	}
	s.ended = append(s.ended, f)
}

// Closed reports whether the stream has ended, so its owner can forget it.
func (s *EventStream) Closed() bool {
	if s.fb != nil {
		return s.fb.isClosed()
	}
	return s.c == nil
}

// endStream detaches c's stream: its request's context is canceled and
// its line written to the access log.
func (l *loop) endStream(c *conn) {
	s := c.stream
	c.stream, s.c = nil, nil
	l.ended = append(l.ended, s.ended...) // OnClose: run by runEnded
	s.ended = nil
	s.ctx.cancel()
	l.count.countResponse(http.StatusOK)
	if l.access != nil {
		l.access.record(logRemote(c.remote, s.req), s.req, http.StatusOK, s.sent)
	}
}

// Broadcast writes p to every stream in streams that is still open, and
// reports how many it reached. It copies p once, and frames it once, for
// all of them: each stream's output holds the same bytes, not a copy,
// which makes an event to ten thousand subscribers cost one buffer. Under
// gameserver call it on the loop goroutine; each stream is bounded by its
// StreamBuffer as with Write.
func Broadcast(streams []*EventStream, p []byte) int {
	if len(p) == 0 {
		return 0
	}
	var framed, raw []byte // shared by every stream: never written to again
	sent := 0
	for _, s := range streams {
		switch {
		case s.fb != nil:
			if raw == nil {
				raw = append([]byte(nil), p...)
			}
			if _, err := s.fb.write(raw, true); err == nil {
				sent++
			}
			continue
		case s.c == nil:
			continue
		}
		if framed == nil {
			// slices.Grow rounds the capacity up to the allocation's
			// size, so it is the memory the event holds (outq.held).
			framed = strconv.AppendInt(slices.Grow([]byte(nil), len(p)+20), int64(len(p)), 16)
			framed = append(framed, "\r\n"...)
			framed = append(append(framed, p...), "\r\n"...)
			raw = framed[len(framed)-2-len(p) : len(framed)-2]
		}
		ev := raw
		if s.frame == frameChunked {
			ev = framed
		}
		if out := &s.c.out; len(ev) <= out.tailRoom() {
			// A stream already behind has a buffer with room: the copy
			// costs nothing more, where sharing would close that buffer
			// and make its next Write take a whole new one.
			out.write(ev, s.l)
		} else {
			out.pushShared(ev)
		}
		if s.queued(len(p)) == nil {
			sent++
		}
	}
	return sent
}

// fallbackStream is an EventStream served by Stream itself, on its
// handler's goroutine, under another server: writers queue, the handler
// writes and flushes.
type fallbackStream struct {
	mu     sync.Mutex
	q      [][]byte
	n      int // bytes queued
	closed bool
	wake   chan struct{} // has a value when q or closed changed
	funcs  []func()      // OnClose's, run by end
	ended  bool          // the handler is done with the stream: OnClose runs at once
}

// streamFallback is Stream under another server.
func streamFallback(w http.ResponseWriter, r *http.Request, open func(*EventStream)) error {
	f, ok := w.(http.Flusher)
	if !ok {
		return errors.New("gameserver: Stream needs a gameserver ResponseWriter or an http.Flusher")
	}
	streamHeader(w.Header())
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	fb := &fallbackStream{wake: make(chan struct{}, 1)}
	defer fb.end() // OnClose's functions, with a SerialHandler's lock taken back
	open(&EventStream{fb: fb})
	serveUnlocked(r.Context(), fb, func() { fb.serve(w, f, r) }) // a SerialHandler's lock
	return nil
}

// onClose runs f when the handler is done with the stream, or now if it
// is (EventStream.OnClose).
func (fb *fallbackStream) onClose(f func()) {
	fb.mu.Lock()
	if !fb.ended {
		fb.funcs = append(fb.funcs, f)
		fb.mu.Unlock()
		return
	}
	fb.mu.Unlock()
	f()
}

// end marks the stream ended, and runs the functions OnClose gave, in
// order, each as it would run after the stream (a panic goes on to the
// handler's server, as a handler's would).
func (fb *fallbackStream) end() {
	fb.mu.Lock()
	fb.closed, fb.ended = true, true
	funcs := fb.funcs
	fb.funcs = nil
	fb.mu.Unlock()
	for _, f := range funcs {
		f()
	}
}

// serve writes what is queued until the stream closes or the request's
// context ends.
func (fb *fallbackStream) serve(w http.ResponseWriter, f http.Flusher, r *http.Request) {
	defer fb.close()
	f.Flush() // the header, and what the handler wrote before Stream
	for {
		select {
		case <-fb.wake:
		case <-r.Context().Done():
			return
		}
		q, closed := fb.take()
		for _, p := range q {
			if _, err := w.Write(p); err != nil {
				return
			}
		}
		if len(q) > 0 {
			f.Flush()
		}
		if closed {
			return
		}
	}
}

// write queues p (a copy, unless shared: p is then never changed).
func (fb *fallbackStream) write(p []byte, shared bool) (int, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.closed {
		return 0, ErrStreamClosed
	}
	if !shared {
		p = append([]byte(nil), p...)
	}
	fb.q = append(fb.q, p)
	fb.n += len(p)
	if fb.n > DefaultStreamBuffer {
		fb.closed, fb.q = true, nil
	}
	fb.signal()
	if fb.closed {
		return 0, ErrStreamClosed
	}
	return len(p), nil
}

// take hands the queue to the writer.
func (fb *fallbackStream) take() ([][]byte, bool) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	q := fb.q
	fb.q, fb.n = nil, 0
	return q, fb.closed
}

func (fb *fallbackStream) close() {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	fb.closed = true
	fb.signal()
}

func (fb *fallbackStream) isClosed() bool {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.closed
}

func (fb *fallbackStream) signal() {
	select {
	case fb.wake <- struct{}{}:
	default:
	}
}
