package loadtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// readBufferSize is each connection's read buffer: a response's header
// section must fit in it (ab's limit is 8 KiB); bodies stream through it.
const readBufferSize = 32 << 10

// worker is one of the run's concurrent clients: one connection at a time,
// one request at a time, the next sent as soon as the previous response is
// read. Everything it counts is its own until the run merges it.
type worker struct {
	run    *run
	dialer net.Dialer
	conn   net.Conn
	buf    []byte
	r, w   int // unparsed bytes are buf[r:w]
	resp   response
	raw    bool  // conn is read and written through io
	io     rawIO // the raw-socket path (rawio_unix.go)

	deadline time.Time // conn's deadline as last set
	next     time.Time // when a kept connection's next request starts

	counts    counts
	completed atomic.Int64 // read by the progress goroutine
	times     [5]*phase    // connect, processing, waiting, total; reused (see finish)
	reused    int64        // requests on a reused connection (Connect 0, Processing = Total)
	last      time.Time    // end of the last complete request
	server    string       // Server field of this worker's first response
	serverAt  time.Time    // when that response ended
	tlsInfo   string       // the first TLS handshake's "protocol,cipher", "" before one

	logBuf  []byte    // request log lines not yet written (run.log)
	started time.Time // when the current request started

	pace *pacer      // the open-loop schedule (Config.Rate), nil in a closed loop
	open openFigures // what only an open loop records
	tl   *timeline   // per-second histograms (Config.Timeline), else nil
}

// counts are a worker's tallies, summed into the Result.
type counts struct {
	complete, keepAlive, non2xx int64
	statuses                    map[int]int64 // complete responses by status code, nil until one
	// A run of responses of one status is counted here, the map touched
	// only when the status changes.
	status           int
	sameStatus       int64
	failures         Failures
	read, body, sent int64
}

// count counts a complete response of status code.
func (c *counts) count(code int) {
	if code != c.status {
		c.flushStatus()
		c.status = code
	}
	c.sameStatus++
}

// flushStatus moves the run of one status into the map.
func (c *counts) flushStatus() {
	if c.sameStatus == 0 {
		return
	}
	if c.statuses == nil {
		c.statuses = map[int]int64{}
	}
	c.statuses[c.status] += c.sameStatus
	c.sameStatus = 0
}

// outcome of one attempt at a request.
type outcome int

const (
	finished  outcome = iota // counted, good or failed
	retry                    // not counted; try again (reused connection closed, failed connect)
	abandoned                // not counted; the run is stopping
)

// stamps are one request's instants, as ab takes them.
type stamps struct {
	start, connected, written, first, done time.Time
	reused                                 bool // on a connection kept from before
}

// newWorker makes one of the run's Concurrency workers.
func newWorker(r *run) *worker {
	w := &worker{run: r, buf: make([]byte, readBufferSize)}
	for i := range w.times {
		w.times[i] = newPhase()
	}
	w.resp.wantServer = true
	cfg := &r.t.cfg
	if cfg.Rate > 0 {
		w.pace = &pacer{rate: cfg.Rate}
		w.open.corrected, w.open.clientLate = newPhase(), newPhase()
	}
	if cfg.Timeline {
		w.tl = &timeline{}
	}
	return w
}

// begin sets the clock the worker's schedule and timeline count from.
func (w *worker) begin(start time.Time) {
	if w.pace != nil {
		w.pace.start = start
	}
	if w.tl != nil {
		w.tl.start = start
	}
}

// loop runs requests until the run's budget is spent or it stops. In an
// open loop each request waits until it is due.
func (w *worker) loop() {
	defer w.closeConn()
	defer w.flushLog()
	for {
		i, ok := w.run.take()
		if ok && w.pace != nil {
			w.claim(i)
			ok = w.waitDue()
		}
		if !ok {
			return
		}
		o := w.attempt()
		for o == retry && !w.run.stopping() {
			o = w.attempt()
		}
		if o == abandoned {
			return
		}
	}
}

// attempt makes one try at a request and accounts for it.
func (w *worker) attempt() outcome {
	var s stamps
	s.start = w.next
	if s.start.IsZero() || w.conn == nil {
		s.start = time.Now()
	}
	w.next, w.started = time.Time{}, s.start
	if w.run.expired(s.start) {
		return abandoned
	}
	deadline := w.run.deadline(s.start)
	reused := w.conn != nil
	if o, ok := w.connect(&s, deadline); !ok {
		return o
	}
	if err := w.setDeadline(deadline); err != nil {
		return w.fail(err, reused, 0, &w.counts.failures.Exceptions)
	}
	n, err := w.exchange(&s)
	if !isWriteError(err) {
		n, err = w.readResponse(&s, n, err)
	}
	if err != nil {
		counter := &w.counts.failures.Receive
		if isWriteError(err) || errors.Is(err, errMalformed) {
			counter = &w.counts.failures.Exceptions
		}
		return w.fail(err, reused, n, counter)
	}
	w.finish(&s)
	return finished
}

// connect opens a connection unless the worker has one; ok is false when
// it could not.
func (w *worker) connect(s *stamps, deadline time.Time) (outcome, bool) {
	if w.conn != nil {
		s.connected, s.reused = s.start, true
		return finished, true
	}
	w.dialer.Deadline = deadline
	w.dialer.LocalAddr = w.run.localAddr()
	c, err := w.dialer.DialContext(context.Background(), "tcp", w.run.addr)
	if err != nil {
		if w.run.cut(time.Now()) {
			return abandoned, false
		}
		w.counts.failures.Connect++
		w.logRequest(s.start, time.Since(s.start), 0, 0, err)
		w.run.connectFailed(err)
		return retry, false
	}
	if tc := w.run.t.tls; tc != nil {
		if c, err = w.handshake(c, tc, deadline); err != nil {
			return w.handshakeFailed(err)
		}
	}
	s.connected = time.Now()
	w.conn, w.r, w.w, w.deadline = c, 0, 0, time.Time{}
	w.raw = !w.run.t.cfg.noRawIO && w.io.attach(c) // never for TLS: its conn has no raw socket
	return finished, true
}

// handshake makes c a TLS connection with cfg before deadline; the first
// of the run records its protocol and cipher.
func (w *worker) handshake(c net.Conn, cfg *tls.Config, deadline time.Time) (net.Conn, error) {
	tc := tls.Client(c, cfg)
	if err := tc.SetDeadline(deadline); err != nil {
		c.Close()
		return nil, err
	}
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	if w.tlsInfo == "" {
		st := tc.ConnectionState()
		w.tlsInfo = tls.VersionName(st.Version) + "," + tls.CipherSuiteName(st.CipherSuite)
	}
	return tc, nil
}

// handshakeFailed accounts for a failed TLS handshake: a connect failure,
// as ab counts it, except that a certificate that does not verify aborts
// the run at once, since every other connection would fail the same way.
func (w *worker) handshakeFailed(err error) (outcome, bool) {
	if w.run.cut(time.Now()) {
		return abandoned, false
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, &verify) {
		w.run.abort(&AbortError{Op: "SSL handshake failed", Err: fmt.Errorf("%w (-insecure skips the check)", err)})
		return abandoned, false
	}
	w.counts.failures.Connect++
	w.logRequest(w.started, time.Since(w.started), 0, 0, err)
	w.run.connectFailed(err)
	return retry, false
}

// setDeadline makes sure the connection's deadline is at least need. To
// spare a timer update per request, it sets need plus a tenth of the
// timeout, so on a busy connection it runs about once every Timeout/10 and
// a request may wait up to 1.1 times Timeout. Every deadline it sets is
// clipped to the run's time limit, so that one stays exact.
func (w *worker) setDeadline(need time.Time) error {
	if !w.deadline.Before(need) {
		return nil
	}
	d := w.run.limitAt(need.Add(w.run.t.cfg.Timeout / 10))
	if err := w.conn.SetDeadline(d); err != nil {
		return err
	}
	w.deadline = d
	return nil
}

// fail accounts for a request that broke after connecting. A reused
// connection that yields nothing was closed by the server while idle (RFC
// 9112 section 9.6): the request is retried on a new one, as ab does.
func (w *worker) fail(err error, reused bool, n int64, counter *int64) outcome {
	w.closeConn()
	switch {
	case reused && n == 0 && !errors.Is(err, os.ErrDeadlineExceeded):
		return retry
	case w.run.cut(time.Now()) || w.run.stopping():
		return abandoned
	}
	*counter++
	w.counts.complete++
	w.completed.Add(1)
	w.logRequest(w.started, time.Since(w.started), 0, n, err)
	if counter == &w.counts.failures.Receive && !w.run.t.cfg.ContinueOnReceiveError {
		w.run.abort(&AbortError{Op: receiveOp(err), Err: err})
	}
	return finished
}

// receiveOp is ab's name for where a receive error surfaced.
func receiveOp(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "apr_pollset_poll"
	}
	return "apr_socket_recv"
}

func (w *worker) closeConn() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	w.r, w.w = 0, 0
}

// errMalformed wraps the parser's errors: the request is an Exception, not a
// Receive failure.
var errMalformed = errors.New("loadtest: malformed response")

// writeError is a failure to send the request.
type writeError struct{ err error }

func (e writeError) Error() string { return "loadtest: write: " + e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// isWriteError reports whether err is exchange's writeError (without the
// allocation errors.As would cost on every request).
func isWriteError(err error) bool {
	_, ok := err.(writeError)
	return ok
}

// exchange writes the request and reads the first bytes of the response;
// it returns how many it read. A failed write is a writeError.
func (w *worker) exchange(s *stamps) (int64, error) {
	w.compact()
	req, buf := w.run.t.request, w.buf[w.w:]
	var m int
	var werr, err error
	if w.raw {
		s.written, m, werr, err = w.io.exchange(req, buf)
		if werr == errWriteBlocked { // the rest of a large request body
			if _, werr = w.conn.Write(w.io.out); werr == nil {
				s.written = time.Now()
				m, err = w.conn.Read(buf)
			}
		}
	} else if _, werr = w.conn.Write(req); werr == nil {
		s.written = time.Now()
		m, err = w.conn.Read(buf)
	}
	if werr != nil {
		return 0, writeError{werr}
	}
	w.counts.sent += w.run.t.sentPerRequest
	if w.r < w.w || m > 0 {
		s.first = time.Now()
	}
	w.w += m
	w.counts.read += int64(m)
	return int64(m), err
}

// readResponse parses the response whose first n bytes (and read error)
// exchange returned, reading the rest; it returns the bytes read for it. On
// return without error w.resp describes the response and the connection is
// closed unless it may be reused.
func (w *worker) readResponse(s *stamps, n int64, err error) (int64, error) {
	w.resp.reset(w.run.t.head, w.serverAt.IsZero())
	s.done = s.first // if the first read holds the whole response, it ends then
	for {
		if w.r < w.w {
			m, perr := w.resp.feed(w.buf[w.r:w.w], w.r == 0 && w.w == len(w.buf))
			w.r += m
			if perr != nil {
				return n, errors.Join(errMalformed, perr)
			}
			if w.resp.done() {
				return n, w.afterResponse(s)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && w.resp.eof() {
				w.closeConn()
				s.done = time.Now()
				return n, nil
			}
			return n, err
		}
		var m int
		m, err = w.fill()
		s.done = time.Time{}
		if m > 0 && s.first.IsZero() {
			s.first = time.Now()
		}
		n += int64(m)
	}
}

// compact moves unparsed bytes to the start of the buffer.
func (w *worker) compact() {
	if w.r == w.w {
		w.r, w.w = 0, 0
	} else if w.r > 0 {
		w.w = copy(w.buf, w.buf[w.r:w.w])
		w.r = 0
	}
}

// fill reads more bytes into the buffer after the unparsed ones.
func (w *worker) fill() (int, error) {
	w.compact()
	var m int
	var err error
	if w.raw {
		m, err = w.io.read(w.buf[w.w:])
	} else {
		m, err = w.conn.Read(w.buf[w.w:])
	}
	w.w += m
	w.counts.read += int64(m)
	return m, err
}

// afterResponse decides the connection's fate once a response is complete.
// With -k a persistent connection is kept. Otherwise, when the server said
// it would close, the request ends when it does (as ab's ends at EOF); a
// server that meant to keep the connection is left by closing it.
func (w *worker) afterResponse(s *stamps) error {
	if w.run.t.cfg.KeepAlive && w.resp.persistent {
		w.counts.keepAlive++
		if s.done.IsZero() {
			s.done = time.Now()
		}
		return nil
	}
	if !w.resp.persistent {
		for {
			m, err := w.fill()
			w.r = w.w // anything after the response is read and dropped
			if err != nil || m == 0 {
				break
			}
		}
	}
	w.closeConn()
	s.done = time.Now()
	return nil
}

// finish accounts for a complete response.
func (w *worker) finish(s *stamps) {
	c := &w.counts
	c.complete++
	c.body += w.resp.bodyBytes
	if w.resp.status < 200 || w.resp.status > 299 {
		c.non2xx++
	}
	c.count(w.resp.status)
	if !w.run.checkLength(w.resp.bodyBytes) {
		c.failures.Length++
	}
	if w.serverAt.IsZero() {
		w.server, w.serverAt = w.resp.server, s.done
	}
	total := s.done.Sub(s.start).Microseconds()
	w.times[2].record(s.first.Sub(s.written).Microseconds())
	if s.reused {
		// A reused connection: Connect is 0 and Processing equals Total, so
		// they are recorded once, in times[4], and a count (see merge);
		// this halves the histogram work of a kept-alive request.
		w.reused++
		w.times[4].record(total)
	} else {
		w.times[0].record(s.connected.Sub(s.start).Microseconds())
		w.times[1].record(s.done.Sub(s.connected).Microseconds())
		w.times[3].record(total)
	}
	w.last = s.done
	switch {
	case w.pace != nil:
		w.recordOpen(s)
		if w.tl != nil {
			w.tl.record(s.done, w.open.lastCorrect, total)
		}
	case w.tl != nil:
		w.tl.record(s.done, total, -1)
	}
	if w.run.log != nil {
		w.logFinished(s, total)
	}
	if w.conn != nil && w.pace == nil {
		// The next request on this connection starts now, as ab restarts
		// the clock of a kept-alive connection once a response is in.
		w.next = s.done
	}
	w.completed.Add(1)
}
