//go:build !linux || gameserver_portable

package gameserver

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// This is the portable back end, for systems without epoll (and on Linux
// with the build tag gameserver_portable, so its tests run everywhere).
// Helper goroutines do the blocking I/O through the net package: one
// accepts, one per connection reads, and each write runs on a goroutine of
// its own. They only move bytes; everything else (parsing, handlers,
// timers, posted functions) runs one at a time on the loop goroutine,
// which learns of their results through one channel.

// connSys is the portable back end's part of a conn.
type connSys struct {
	nc       net.Conn
	readNext chan struct{} // the loop lets the reader read again (closed: stop)
	parked   bool          // the reader waits for readNext
	writing  bool          // a write is in flight
	inflight atomic.Int64  // bytes the reader has read and not yet handed to the loop
}

// writeInFlight reports whether a write goroutine still reads c's output
// buffers.
func (c *connSys) writeInFlight() bool { return c.writing }

// event is a helper goroutine's report to the loop.
type event struct {
	kind eventKind
	c    *conn
	nc   net.Conn // evAccept
	data []byte   // evRead: valid until the loop lets the reader read again
	n    int      // evWrite: bytes written
	err  error
}

type eventKind uint8

const (
	evAccept eventKind = iota
	evRead
	evWrite
	evAcceptErr
)

// backendSys is the back end the loop holds.
type backendSys = portableBackend

// portableBackend moves bytes through the net package on helper
// goroutines and reports to the loop through one channel.
type portableBackend struct {
	l      *loop
	events chan event
	wakeCh chan struct{}
	ln     net.Listener
	port   int // the listener's TCP port; 0 for others
	conns  map[*conn]struct{}
	timer  *time.Timer
	ev     event // the event wait received, if got
	got    bool
	woke   bool
}

func (b *portableBackend) init(l *loop) func() {
	b.l = l
	b.events = make(chan event, 256)
	b.wakeCh = make(chan struct{}, 1)
	b.conns = make(map[*conn]struct{})
	return b.wakeup
}

func (b *portableBackend) wakeup() {
	select {
	case b.wakeCh <- struct{}{}:
	default:
	}
}

// self is the calling goroutine's id.
func (b *portableBackend) self() int64 { return goroutineID() }

func (b *portableBackend) open() error {
	b.timer = time.NewTimer(time.Hour)
	return nil
}

func (b *portableBackend) close() { b.timer.Stop() }

func (b *portableBackend) listen(ln net.Listener) error {
	b.ln = ln
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		b.port = a.Port
		control(ln, func(fd int) error { forgetSYNFilter(fd); return nil })
	}
	go b.acceptor(ln)
	return nil
}

// control runs f on the socket behind v, if it has one.
func control(v any, f func(fd int) error) error {
	sc, ok := v.(syscall.Conn)
	if !ok {
		return errors.New("gameserver: no file descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// refuseHandshakes attaches the SYN filter to the listener, where the
// system has one (backend.refuseHandshakes).
func (b *portableBackend) refuseHandshakes() bool {
	return b.ln != nil && b.port != 0 && control(b.ln, refuseSYN) == nil
}

// handshaking asks the system about handshakes to the listener's port
// (backend.handshaking).
func (b *portableBackend) handshaking() (bool, error) {
	if b.ln == nil || b.port == 0 {
		return false, nil
	}
	return handshaking(b.port)
}

// acceptQueued waits until the acceptor has taken every connection
// queued on the listener, where the system tells how many are
// (acceptQueueLen), handling the reports that arrive meanwhile as
// dispatch would, for at most acceptDrainWait (backend.acceptQueued).
// The acceptor runs on its own goroutine and may lag the loop: closing
// the listener with connections still queued would reset them after
// their clients sent a request. It runs on the loop, outside dispatch
// (from a posted function or a timer).
func (b *portableBackend) acceptQueued() {
	if b.ln == nil {
		return
	}
	queued := func() (n int) {
		control(b.ln, func(fd int) error { n = acceptQueueLen(fd); return nil })
		return n
	}
	deadline := time.Now().Add(acceptDrainWait)
	for queued() > 0 && time.Now().Before(deadline) {
		select {
		case ev := <-b.events:
			b.handle(ev)
		case <-time.After(time.Millisecond):
		}
	}
}

// acceptDrainWait bounds how long acceptQueued waits for the acceptor.
const acceptDrainWait = time.Second

// unread is what c's reader holds for the loop plus what its socket
// holds, where the system tells (backend.unread).
func (b *portableBackend) unread(c *conn) int {
	n := 0
	control(c.nc, func(fd int) error { n = unreadBytes(fd); return nil })
	return n + int(c.inflight.Load())
}

// wait blocks until an event, the timeout or a post. It keeps the event,
// if there was one, and whether functions were posted, for dispatch.
func (b *portableBackend) wait(ms int) error {
	b.got, b.woke = false, false
	var tc <-chan time.Time
	switch {
	case ms == 0:
		tc = nowCh
	case ms > 0:
		b.timer.Reset(time.Duration(ms) * time.Millisecond)
		tc = b.timer.C
	}
	select {
	case b.ev = <-b.events:
		b.got = true
	case <-tc:
		return nil
	case <-b.wakeCh:
		b.woke = true
		return nil
	}
	b.timer.Stop()
	select {
	case <-b.wakeCh:
		b.woke = true
	default:
	}
	return nil
}

// nowCh is always ready: wait's timeout when it must not block.
var nowCh = func() chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()

// dispatch handles the event wait received and those already queued
// behind it, up to one batch, and none past turnBudget (the first always
// runs): the rest stay in the channel, in the order they came, for the
// next turn.
func (b *portableBackend) dispatch() (woke bool) {
	handled := b.got
	if b.got {
		b.got = false
		b.handle(b.ev)
		b.ev = event{}
	}
	for range cap(b.events) {
		if handled && b.l.overBudget() {
			return b.woke
		}
		select {
		case ev := <-b.events:
			b.handle(ev)
			handled = true
		default:
			return b.woke
		}
	}
	return b.woke
}

// leftover reports whether the last turn left events to the next
// (backend.leftover): never here, since the events a turn leaves stay in
// the channel, which wait finds them in at once.
func (b *portableBackend) leftover() bool { return false }

// handle is one helper report.
func (b *portableBackend) handle(ev event) {
	switch ev.kind {
	case evAccept:
		b.register(ev.nc)
	case evAcceptErr:
		b.l.acceptFailed(ev.err)
	case evRead:
		b.onRead(ev)
	case evWrite:
		b.onWritten(ev)
	}
}

// report delivers ev to the loop unless the loop has stopped.
func (b *portableBackend) report(ev event) bool {
	select {
	case b.events <- ev:
		return true
	case <-b.l.done:
		return false
	}
}

// acceptor accepts connections for the loop until the listener closes,
// resting acceptPause after an error (the loop logs the first of an
// episode).
func (b *portableBackend) acceptor(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err == nil {
			if !b.report(event{kind: evAccept, nc: nc}) {
				nc.Close()
				return
			}
			continue
		}
		if errors.Is(err, net.ErrClosed) || !b.report(event{kind: evAcceptErr, err: err}) {
			return
		}
		time.Sleep(acceptPause)
	}
}

// register starts serving an accepted connection the loop admits
// (loop.admit), or closes it at once.
func (b *portableBackend) register(nc net.Conn) {
	l := b.l
	ip := remoteIP(nc.RemoteAddr())
	if !l.admit(ip) {
		nc.Close()
		return
	}
	c := l.newConn(nc.RemoteAddr().String(), ip)
	c.nc = nc
	c.nodelay = true // the net package sets TCP_NODELAY on every TCP connection
	c.readNext = make(chan struct{}, 1)
	b.conns[c] = struct{}{}
	l.opened(c)
	go b.reader(c)
}

// remoteIP returns a peer's IP address, or the zero Addr if it has none
// (a Unix socket).
func remoteIP(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// reader reads c for the loop, one buffer at a time: it reads again only
// when the loop says so, which keeps its buffer stable while the loop
// uses it and stops reading while c's output is over the high-water mark.
func (b *portableBackend) reader(c *conn) {
	buf := make([]byte, bufSize)
	for {
		n, err := c.nc.Read(buf)
		c.inflight.Store(int64(n))
		if !b.report(event{kind: evRead, c: c, data: buf[:n], err: err}) || err != nil {
			return
		}
		if _, ok := <-c.readNext; !ok {
			return
		}
	}
}

// onRead handles bytes or an error from c's reader.
func (b *portableBackend) onRead(ev event) {
	l, c := b.l, ev.c
	c.inflight.Store(0)
	if c.phase == phaseClosed {
		return
	}
	c.parked = true
	if len(ev.data) > 0 {
		l.onInput(c, ev.data)
	}
	switch {
	case c.phase == phaseClosed:
	case ev.err == nil:
		if !c.marked {
			b.watch(c) // a read the loop kept without marking c (marked ones are watched by flushPending)
		}
	case isEOF(ev.err):
		l.onEOF(c)
	default:
		l.onHangup(c)
	}
}

// write starts writing at most limit bytes of c's queued output on a
// helper goroutine, unless a write is in flight; the loop hears of its
// end (onWritten) on a later turn.
func (b *portableBackend) write(c *conn, limit int) {
	if c.writing {
		return
	}
	c.writing = true
	bufs := net.Buffers(c.out.iovecs(nil, limit))
	go func() {
		n, err := bufs.WriteTo(c.nc)
		b.report(event{kind: evWrite, c: c, n: int(n), err: err})
	}()
}

// noDelay does nothing: the net package set TCP_NODELAY already
// (backend.noDelay).
func (b *portableBackend) noDelay(c *conn) {}

// onWritten handles the end of a write: what was written, then the
// failure if there was one (loop.onHangup), or the socket's room for more.
func (b *portableBackend) onWritten(ev event) {
	l, c := b.l, ev.c
	c.writing = false
	if c.phase == phaseClosed {
		l.writeEnded(c)
		return
	}
	if ev.n > 0 {
		l.onWritten(c, ev.n)
	}
	if ev.err != nil {
		l.onHangup(c)
		return
	}
	l.onWritable(c)
}

// watch lets c's reader read again when c's state calls for input, or,
// while a response is held, when the loop lets a back end that notices a
// client going away only by reading take more (conn.readHeld). Not while
// a handler runs: its request may point into the reader's buffer.
func (b *portableBackend) watch(c *conn) {
	if !c.parked || c.phase == phaseClosed {
		return
	}
	if c.wantRead() || c.readHeld() {
		c.parked = false
		c.readNext <- struct{}{}
	}
}

// readNow does nothing here: c's reader reports what arrives on its own,
// and the next turn handles it (backend.readNow).
func (b *portableBackend) readNow(c *conn) {}

// shutdownWrite half-closes c (lingering close).
func (b *portableBackend) shutdownWrite(c *conn) bool {
	cw, ok := c.nc.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}

// closeConn closes c's socket and stops its reader.
func (b *portableBackend) closeConn(c *conn) {
	delete(b.conns, c)
	c.nc.Close()
	close(c.readNext)
}

// each calls f for every open connection.
func (b *portableBackend) each(f func(*conn)) {
	for c := range b.conns {
		f(c)
	}
}

func (b *portableBackend) closeListener() {
	if b.ln != nil {
		b.ln.Close()
		b.ln = nil
	}
}

// isEOF reports whether err means the client closed its side.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// goroutineID returns the calling goroutine's id, from the first line of
// its stack ("goroutine 42 [running]:"). Only Shutdown and Close ask, so
// the cost does not matter.
func goroutineID() int64 {
	var buf [64]byte
	line := string(buf[:runtime.Stack(buf[:], false)])
	line = strings.TrimPrefix(line, "goroutine ")
	id, _ := strconv.ParseInt(line[:max(strings.IndexByte(line, ' '), 0)], 10, 64)
	return id
}
