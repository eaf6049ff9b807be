package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Server-sent event streams (WHATWG HTML section 9.2) on raw connections:
// a load generator sharing two cores with the server must hold thousands
// of idle streams, so each is one TCP connection, one goroutine and two
// small buffers, its events parsed in place.

// Event is one server-sent event as received: valid only during the call
// it is passed to (Key, a Wait's match); Wait returns a copy.
type Event struct {
	Name string // the event field; "message" when absent
	ID   string // the id field of this event, "" when absent
	Data []byte // the data lines joined by "\n"
	At   time.Time
}

// StreamOptions configure User.Stream.
type StreamOptions struct {
	// Key, when set, names the write that caused ev (User.Cause), "" for
	// none: the event's delivery time is then counted. It is called on
	// the stream's goroutine for every event.
	Key func(ev *Event) []byte
	// OnEvent, when set, is called with every event, on the stream's
	// goroutine, before Key: what a page's script would do with it.
	OnEvent func(ev *Event)
	// Header is added to the request (Last-Event-ID, say).
	Header http.Header
}

// Stream is an open event stream. Wait and Close may be called from any
// goroutine.
type Stream struct {
	run  *usersRun
	user *User
	conn net.Conn
	opt  StreamOptions
	stop func() bool // ends the close-on-ctx hook

	mu      sync.Mutex
	waiters []*waiter
	lastID  string
	err     error
	done    chan struct{}
	events  int64
	closing bool
}

type waiter struct {
	match func(*Event) bool
	got   chan Event
}

// streamBuffer is each stream's read buffer size, and its line buffer's.
const streamBuffer = 2048

// Stream opens an event stream at path as step (its latency: until the
// response's header is in), with the user's cookies, and reads it on a
// goroutine of its own until Close, the server ends it, or ctx ends. A
// status other than 200 or a Content-Type other than text/event-stream
// is an error.
func (u *User) Stream(ctx context.Context, step, path string, opt StreamOptions) (*Stream, error) {
	r := u.run
	st := r.step(step)
	e := stepEnd{start: u.begin(st)}
	s, sent, err := u.openStream(ctx, path, opt)
	e.sent, e.done = sent, time.Now()
	if err == nil {
		e.status = http.StatusOK
	}
	u.end(st, e, err)
	if err != nil {
		if r.ctx.Err() == nil {
			r.noteErr(step, err)
		}
		return nil, fmt.Errorf("%s: %w", step, err)
	}
	return s, nil
}

func (u *User) openStream(ctx context.Context, path string, opt StreamOptions) (*Stream, time.Time, error) {
	r := u.run
	target := r.base.ResolveReference(mustParse(path))
	dctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if u.bind != nil {
		dctx = context.WithValue(dctx, bindKey{}, u.bind)
	}
	conn, err := r.dial(dctx, "tcp", hostPort(target))
	sent := time.Now()
	if err != nil {
		return nil, sent, err
	}
	if target.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: target.Hostname()})
		if err := tc.HandshakeContext(dctx); err != nil {
			conn.Close()
			return nil, sent, err
		}
		conn = tc
	}
	req := u.streamRequest(target, opt.Header)
	if dl, ok := dctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := conn.Write(req); err != nil {
		conn.Close()
		return nil, sent, err
	}
	br := headerReaders.Get().(*bufio.Reader)
	br.Reset(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	var pending []byte
	if err == nil { // what came after the header: the first events, often
		b, _ := br.Peek(br.Buffered())
		pending = bytes.Clone(b)
	}
	br.Reset(nil)
	headerReaders.Put(br)
	if err != nil {
		conn.Close()
		return nil, sent, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		conn.Close()
		return nil, sent, fmt.Errorf("status %d, Content-Type %q: not an event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	conn.SetDeadline(time.Time{})
	s := &Stream{run: r, user: u, conn: conn, opt: opt, done: make(chan struct{})}
	s.stop = context.AfterFunc(ctx, s.Close)
	r.streams.Add(1)
	go s.read(conn, slices.Contains(resp.TransferEncoding, "chunked"), pending)
	return s, sent, nil
}

// streamRequest is the request that opens a stream at target, with the
// user's cookies and header.
func (u *User) streamRequest(target *url.URL, header http.Header) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n", target.RequestURI(), target.Host)
	if cs := u.Jar.Cookies(target); len(cs) > 0 {
		b.WriteString("Cookie: ")
		for i, c := range cs {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(c.Name + "=" + c.Value)
		}
		b.WriteString("\r\n")
	}
	for k, vs := range header {
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// mustParse parses a step's path; one that does not parse is taken as
// a path as it is.
func mustParse(path string) *url.URL {
	u, err := url.Parse(path)
	if err != nil {
		return &url.URL{Path: path}
	}
	return u
}

// hostPort is u's host and port, the scheme's default port when u names
// none ("[::1]:80" for http://[::1]/).
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// headerReaders hold the readers a stream's response header is read
// with: once it is in, the stream reads its socket itself.
var headerReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamBuffer) }}

// read decodes the stream's events from pending (what came with the
// response's header) and then r, as they arrive, until it ends: one read
// a wake-up into one buffer, decoded in place (sseDecoder), each event
// stamped with the time its bytes were read.
func (s *Stream) read(r io.Reader, chunked bool, pending []byte) {
	defer func() {
		s.run.streams.Add(-1)
		s.conn.Close()
		s.stop()
		close(s.done)
	}()
	var at time.Time
	d := newSSEDecoder(chunked, func(ev *Event) { ev.At = at; s.dispatch(ev) })
	at = time.Now()
	err := d.feed(pending)
	buf := make([]byte, streamBuffer)
	for err == nil {
		n, rerr := r.Read(buf)
		if n > 0 {
			at = time.Now()
			err = d.feed(buf[:n])
		}
		if err == nil {
			err = rerr
		}
	}
	s.finish(err)
}

// dispatch counts ev, its delivery when it has a key, and hands it to the
// waiters it matches.
func (s *Stream) dispatch(ev *Event) {
	r := s.run
	r.events.Add(1)
	if s.opt.OnEvent != nil {
		s.opt.OnEvent(ev)
	}
	if s.opt.Key != nil {
		if key := s.opt.Key(ev); len(key) > 0 {
			if d, ok := r.causes.delay(key, ev.At); ok {
				r.delivery.record(d, d, 0, false)
			}
			// else kept a while: its write's Cause may come yet
		}
	}
	s.mu.Lock()
	s.events++
	if ev.ID != "" {
		s.lastID = ev.ID
	}
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.match(ev) {
			c := *ev
			c.Data = bytes.Clone(ev.Data)
			w.got <- c
			continue
		}
		kept = append(kept, w)
	}
	clear(s.waiters[len(kept):])
	s.waiters = kept
	s.mu.Unlock()
}

func (s *Stream) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || errors.Is(err, io.EOF) {
		err = ErrStreamClosed
	}
	s.err = err
}

// ErrStreamClosed is a stream's error once it was closed, or the server
// ended it.
var ErrStreamClosed = errors.New("event stream closed")

// Wait waits, as step, for the next event match accepts (called on the
// stream's goroutine) to arrive after the call, and returns a copy of it;
// the step's latency runs from the call to the event's arrival. Unlike
// the user's other steps it leaves the user's schedule alone, so it may
// run on another goroutine while the user goes on. The
// stream's end, ctx's or UsersConfig.Timeout first is an error.
func (s *Stream) Wait(ctx context.Context, step string, match func(*Event) bool) (Event, error) {
	r := s.run
	st := r.step(step)
	start := time.Now()
	w := &waiter{match: match, got: make(chan Event, 1)}
	s.mu.Lock()
	s.waiters = append(s.waiters, w)
	s.mu.Unlock()
	t := time.NewTimer(r.cfg.Timeout)
	defer t.Stop()
	var ev Event
	var err error
	select {
	case ev = <-w.got:
	case <-s.done:
		err = s.Err()
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = fmt.Errorf("%s: no matching event in %v", step, r.cfg.Timeout)
	}
	if err != nil {
		s.drop(w)
		select { // matched meanwhile after all
		case ev = <-w.got:
			err = nil
		default:
		}
	}
	done := time.Now()
	if err == nil {
		done = ev.At
	} else if r.ctx.Err() == nil {
		r.noteErr(step, err)
	}
	if err == nil || r.ctx.Err() == nil { // a wait cut by the run's end is not the server's error
		st.record(done.Sub(start), done.Sub(start), 0, err != nil)
	}
	return ev, err
}

func (s *Stream) drop(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.waiters {
		if x == w {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return
		}
	}
}

// Close closes the stream; its goroutine ends soon after.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.conn.Close()
}

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err is why the stream ended (ErrStreamClosed after Close or the
// server's end), nil while it is open.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// LastID is the id of the last event that had one (for Last-Event-ID).
func (s *Stream) LastID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastID
}

// Events is how many events the stream has received.
func (s *Stream) Events() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events
}
