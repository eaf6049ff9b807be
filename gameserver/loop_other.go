//go:build !linux || gameserver_portable

package gameserver

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
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
}

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

// loop is the portable back end.
type loop struct {
	core
	events  chan event
	wakeCh  chan struct{}
	ln      net.Listener
	conns   map[*conn]struct{}
	timer   *time.Timer
	stopped bool
}

// acceptPause is how long the acceptor rests after a failed accept.
const acceptPause = 100 * time.Millisecond

func (l *loop) init(s *Server) {
	l.events = make(chan event, 256)
	l.wakeCh = make(chan struct{}, 1)
	l.conns = make(map[*conn]struct{})
	l.initCore(s, l.wakeup)
}

func (l *loop) wakeup() {
	select {
	case l.wakeCh <- struct{}{}:
	default:
	}
}

// serve runs the loop on a goroutine of its own and waits for it
// (Server.Serve).
func (l *loop) serve(ln net.Listener) error {
	if err := l.claim(ln); err != nil {
		return err
	}
	return l.spawn(func() error { return l.serveLocked(ln) }, l.teardown)
}

// serveLocked is the loop goroutine's life, locked to its OS thread.
func (l *loop) serveLocked(ln net.Listener) error {
	l.loopID.Store(goroutineID())
	if err := l.begin(); err != nil {
		ln.Close()
		return err
	}
	l.ln = ln
	l.setAddr(ln.Addr())
	go l.acceptor(ln)
	err := l.run()
	l.teardown()
	return err
}

// run is the loop: wait for a helper's event, a timer or a post; handle it.
func (l *loop) run() error {
	l.timer = time.NewTimer(time.Hour)
	defer l.timer.Stop()
	l.startTurn(time.Now())
	l.runPosted()
	for !l.stopped {
		l.endTurn()
		ev, got, woke := l.wait()
		l.startTurn(time.Now())
		if got {
			l.handle(ev)
		}
		l.drainEvents()
		l.runReady()
		l.runTimers(l.now, l.expire)
		if woke {
			l.runPosted()
		}
		if l.draining && l.count.open == 0 {
			l.stopped = true
		}
	}
	return ErrServerClosed
}

// wait blocks until an event, the nearest timer or a post; it does not
// block while the ready queue holds connections. It returns the event if
// there was one, and whether functions were posted.
func (l *loop) wait() (ev event, got, woke bool) {
	ms := l.nextTimeout(l.clock())
	if len(l.readyQ) > 0 {
		ms = 0
	}
	var tc <-chan time.Time
	switch {
	case ms == 0:
		tc = nowCh
	case ms > 0:
		l.timer.Reset(time.Duration(ms) * time.Millisecond)
		tc = l.timer.C
	}
	select {
	case ev = <-l.events:
		got = true
	case <-tc:
		return ev, false, false
	case <-l.wakeCh:
		return ev, false, true
	}
	l.timer.Stop()
	select {
	case <-l.wakeCh:
		return ev, true, true
	default:
		return ev, true, false
	}
}

// nowCh is always ready: wait's timeout when it must not block.
var nowCh = func() chan time.Time {
	ch := make(chan time.Time)
	close(ch)
	return ch
}()

// drainEvents handles the events already queued, up to one batch.
func (l *loop) drainEvents() {
	for range cap(l.events) {
		select {
		case ev := <-l.events:
			l.handle(ev)
		default:
			return
		}
	}
}

// handle is one helper report.
func (l *loop) handle(ev event) {
	switch ev.kind {
	case evAccept:
		l.register(ev.nc)
	case evAcceptErr:
		l.cfg.Logger.Error("gameserver: accept failed; pausing", "err", ev.err, "pause", acceptPause)
	case evRead:
		l.onRead(ev)
	case evWrite:
		l.onWritten(ev)
	}
}

// send delivers ev to the loop unless the loop has stopped.
func (l *loop) report(ev event) bool {
	select {
	case l.events <- ev:
		return true
	case <-l.done:
		return false
	}
}

// acceptor accepts connections for the loop until the listener closes.
func (l *loop) acceptor(ln net.Listener) {
	logged := false
	for {
		nc, err := ln.Accept()
		if err == nil {
			logged = false
			if !l.report(event{kind: evAccept, nc: nc}) {
				nc.Close()
				return
			}
			continue
		}
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if !logged {
			logged = true
			if !l.report(event{kind: evAcceptErr, err: err}) {
				return
			}
		}
		time.Sleep(acceptPause)
	}
}

// register starts serving an accepted connection, or closes it at once
// over MaxConns or while draining.
func (l *loop) register(nc net.Conn) {
	if l.draining || (l.cfg.MaxConns > 0 && l.count.open >= l.cfg.MaxConns) {
		nc.Close()
		if !l.draining {
			l.count.rejected++
		}
		return
	}
	c := l.newConn(nc.RemoteAddr().String())
	c.nc = nc
	c.readNext = make(chan struct{}, 1)
	l.conns[c] = struct{}{}
	c.reqStart = l.now
	l.setDeadline(c, after(l.now, l.cfg.ReadHeaderTimeout))
	go l.reader(c)
}

// reader reads c for the loop, one buffer at a time: it reads again only
// when the loop says so, which keeps its buffer stable while the loop
// uses it and stops reading while c's output is over the high-water mark.
func (l *loop) reader(c *conn) {
	buf := make([]byte, bufSize)
	for {
		n, err := c.nc.Read(buf)
		if !l.report(event{kind: evRead, c: c, data: buf[:n], err: err}) || err != nil {
			return
		}
		if _, ok := <-c.readNext; !ok {
			return
		}
	}
}

// onRead handles bytes or an error from c's reader.
func (l *loop) onRead(ev event) {
	c := ev.c
	if c.closed {
		return
	}
	c.parked = true
	if len(ev.data) > 0 {
		if c.lingering {
			l.count.bytesRead += uint64(len(ev.data))
		} else {
			l.onInput(c, ev.data)
		}
	}
	switch {
	case c.closed || ev.err == nil:
		l.watch(c)
	case isEOF(ev.err):
		l.onEOF(c)
	default:
		l.closeConn(c)
	}
}

// write starts writing c's queued output on a helper goroutine unless a
// write is in flight. It reports false if c has failed.
func (l *loop) write(c *conn) bool {
	if c.broken || c.closed {
		return false
	}
	if c.writing || c.out.n == 0 {
		return true
	}
	c.writing = true
	if c.writeDL == 0 {
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
	}
	bufs := net.Buffers(c.out.iovecs(nil, writeCap))
	go func() {
		n, err := bufs.WriteTo(c.nc)
		l.report(event{kind: evWrite, c: c, n: int(n), err: err})
	}()
	return true
}

// onWritten handles the end of a write.
func (l *loop) onWritten(ev event) {
	c := ev.c
	c.writing = false
	if c.closed {
		return
	}
	if ev.err != nil {
		l.closeConn(c)
		return
	}
	c.out.consume(ev.n, &l.core)
	l.count.bytesWritten += uint64(ev.n)
	c.writeDL = 0
	if c.out.n > 0 {
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
	}
	l.send(c)
}

// watch lets c's reader read again when c's state calls for input. Not
// while a handler runs: its request may point into the reader's buffer.
func (l *loop) watch(c *conn) {
	if c.parked && !c.closed && c.resp == nil && c.wantRead() {
		c.parked = false
		c.readNext <- struct{}{}
	}
}

// shutdownWrite half-closes c (lingering close).
func (l *loop) shutdownWrite(c *conn) bool {
	cw, ok := c.nc.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}

// closeConn closes c now, dropping queued output. While a handler holds c
// the close waits for the response to finish. A write in flight keeps its
// buffers until it ends, so they are not pooled again.
func (l *loop) closeConn(c *conn) {
	if c.closed {
		return
	}
	if c.resp != nil {
		c.broken = true
		c.out = outq{}
		return
	}
	if c.writing {
		c.out = outq{}
	}
	l.release(c)
	delete(l.conns, c)
	c.nc.Close()
	close(c.readNext)
	l.count.open--
}

// beginDrain starts a graceful shutdown on the loop.
func (l *loop) beginDrain() {
	if l.draining {
		return
	}
	l.draining = true
	l.stopUserTimers()
	l.closeListener()
	for c := range l.conns {
		l.drainIdle(c)
	}
	if l.count.open == 0 {
		l.stopped = true
	}
}

// forceStop stops the loop at once (Close, or Shutdown's context ending).
func (l *loop) forceStop() { l.stopped = true }

func (l *loop) closeListener() {
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
}

// teardown closes everything left when the loop stops.
func (l *loop) teardown() {
	l.closeListener()
	for c := range l.conns {
		c.resp = nil // abandoned by runtime.Goexit, if not nil
		l.closeConn(c)
	}
	l.stopUserTimers()
	l.readyQ, l.readySpare = nil, nil
	l.endTurn()
	l.end()
}

// isEOF reports whether err means the client closed its side.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// onLoop reports whether the caller runs on the loop goroutine.
func (c *core) onLoop() bool { return c.loopID.Load() == goroutineID() }

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
