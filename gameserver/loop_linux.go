//go:build linux && !gameserver_portable

package gameserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// connSys is the Linux back end's part of a conn.
type connSys struct {
	fd      int
	events  uint32 // epoll interest registered now
	turn    uint64 // loop turn that conn.turnBytes counts
	nodelay bool   // TCP_NODELAY is set, or not needed (not TCP)
}

// loop is the Linux back end: one goroutine over epoll.
type loop struct {
	core
	poll    poller
	lfd     int                 // our duplicate of the listener's descriptor, -1 when closed
	ln      net.Listener        // kept open until the end only for Unix sockets (see takeListener)
	conns   []*conn             // by file descriptor
	rbuf    []byte              // the one read buffer, shared by every connection
	iov     [][]byte            // segments of the next write
	iovecs  []unix.Iovec        // writev's view of iov
	peer    unix.RawSockaddrAny // accept4's peer address
	woke    bool                // the eventfd fired this turn
	accept  bool                // the listener fired this turn
	stopped bool
}

// acceptPause is how long the listener is ignored after accept fails for
// lack of descriptors or memory, so the loop does not spin on it.
const acceptPause = 100 * time.Millisecond

func (l *loop) init(s *Server) {
	l.poll.epfd, l.poll.wakefd, l.lfd = -1, -1, -1
	l.initCore(s, l.poll.wake)
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
	l.loopID.Store(int64(unix.Gettid()))
	if err := l.poll.open(); err != nil {
		ln.Close()
		return err
	}
	if err := l.begin(); err != nil {
		l.poll.close()
		ln.Close()
		return err
	}
	err := l.takeListener(ln)
	if err == nil {
		err = l.run()
	}
	l.teardown()
	return err
}

// takeListener duplicates ln's descriptor for epoll, so Go's netpoller and
// ours never watch the same descriptor. A TCP listener is closed at once
// (its descriptor leaves Go's netpoller, and the socket lives on in ours);
// a Unix one stays open until the end so closing it does not unlink the
// socket file while we serve.
func (l *loop) takeListener(ln net.Listener) error {
	l.setAddr(ln.Addr())
	fd, err := dupFD(ln)
	if err != nil {
		ln.Close()
		return err
	}
	l.lfd = fd
	if _, ok := ln.(*net.UnixListener); ok {
		l.ln = ln
	} else {
		ln.Close()
	}
	return l.poll.add(fd, unix.EPOLLIN)
}

// dupFD returns a non-blocking, close-on-exec duplicate of ln's descriptor.
func dupFD(ln net.Listener) (int, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("gameserver: listener %T has no file descriptor", ln)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("gameserver: listener: %w", err)
	}
	fd, dupErr := -1, error(nil)
	err = rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) })
	if err = errors.Join(err, dupErr); err != nil {
		return -1, fmt.Errorf("gameserver: dup listener: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("gameserver: listener non-blocking: %w", err)
	}
	return fd, nil
}

// run is the loop: wait, handle ready descriptors, fire timers, run
// posted functions; until Close, the end of a Shutdown, or an error.
func (l *loop) run() error {
	l.rbuf = make([]byte, readBufSize)
	l.startTurn(time.Now())
	l.runPosted()
	for !l.stopped {
		l.endTurn()
		timeout := l.nextTimeout(l.clock())
		if len(l.readyQ) > 0 {
			timeout = 0
		}
		evs, err := l.poll.wait(timeout)
		if err != nil {
			return err
		}
		start := time.Now()
		l.startTurn(start)
		l.dispatch(evs)
		l.runReady()
		l.runTimers(l.now, l.expire)
		if l.woke {
			l.woke = false
			l.poll.drainWake()
			l.runPosted()
		}
		if l.draining && l.count.open == 0 {
			l.stopped = true
		}
		l.count.busy += time.Since(start)
	}
	return ErrServerClosed
}

// dispatch handles one batch of readiness events. The listener is served
// last, so a descriptor closed in this batch cannot be reused by a new
// connection while its stale events are still being handled.
func (l *loop) dispatch(evs []unix.EpollEvent) {
	for i := range evs {
		fd, ev := int(evs[i].Fd), evs[i].Events
		switch {
		case fd == l.poll.wakefd:
			l.woke = true
		case fd == l.lfd:
			l.accept = true
		case fd < len(l.conns) && l.conns[fd] != nil:
			l.onEvent(l.conns[fd], ev)
		}
	}
	if l.accept {
		l.accept = false
		l.acceptConns()
	}
}

// onEvent is one connection's readiness.
func (l *loop) onEvent(c *conn, ev uint32) {
	switch {
	case ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0:
		// Both directions are shut or the connection was reset: nothing
		// queued can reach the client any more.
		l.closeConn(c)
	case ev&unix.EPOLLOUT != 0 && c.wantWrite():
		l.send(c)
		if !c.closed && ev&unix.EPOLLIN != 0 && c.wantRead() {
			l.read(c)
		}
	case ev&unix.EPOLLIN != 0:
		l.read(c)
	}
}

// read reads once into the shared buffer; level-triggered epoll reports
// the connection again if more is waiting.
func (l *loop) read(c *conn) {
	n, err := rawRead(c.fd, l.rbuf)
	switch {
	case err == nil && n > 0:
		if c.lingering {
			l.count.bytesRead += uint64(n)
			return
		}
		l.onInput(c, l.rbuf[:n])
	case err == nil:
		l.onEOF(c)
	case err == unix.EAGAIN || err == unix.EINTR:
	default:
		l.closeConn(c)
	}
}

// write writes queued output until the kernel stops taking it or this
// connection's share of the turn (writeCap) is used. It reports false if
// the connection failed.
func (l *loop) write(c *conn) bool {
	if c.broken {
		return false
	}
	if c.turn != l.turn {
		c.turn, c.turnBytes = l.turn, 0
	}
	if c.writeDL == 0 {
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
	}
	if !c.nodelay && !c.closeAfter {
		// The connection outlives this write, so a later small write
		// must not wait behind Nagle's algorithm for a delayed ACK. A
		// connection that closes after one write never needs it, which
		// saves the system call on each ab-style request.
		c.nodelay = true
		syscall.SetsockoptInt(c.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	}
	for c.out.n > 0 && c.turnBytes < writeCap {
		l.iov = c.out.iovecs(l.iov[:0], writeCap-c.turnBytes)
		iov := l.iov
		n, err := l.writev(c.fd, iov)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			l.closeConn(c)
			return false
		}
		c.out.consume(n, &l.core)
		c.turnBytes += n
		l.count.bytesWritten += uint64(n)
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
		if n < iovLen(iov) {
			break // the socket buffer is full: wait for EPOLLOUT
		}
	}
	clear(l.iov[:cap(l.iov)])
	if c.out.n == 0 {
		c.writeDL = 0
	}
	return true
}

// writev writes the segments with one system call, through a reused
// iovec array (unix.Writev allocates one per call).
func (l *loop) writev(fd int, iov [][]byte) (int, error) {
	if len(iov) == 1 {
		return rawWrite(fd, iov[0])
	}
	l.iovecs = l.iovecs[:0]
	for _, b := range iov {
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		l.iovecs = append(l.iovecs, v)
	}
	n, err := rawWritev(fd, l.iovecs)
	clear(l.iovecs)
	return n, err
}

func iovLen(iov [][]byte) int {
	n := 0
	for _, b := range iov {
		n += len(b)
	}
	return n
}

// watch registers the interest c's state calls for (EPOLLOUT only while
// output is queued), with an epoll_ctl only when it changes.
func (l *loop) watch(c *conn) {
	var ev uint32
	if c.wantRead() {
		ev |= unix.EPOLLIN
	}
	if c.wantWrite() {
		ev |= unix.EPOLLOUT
	}
	if ev == c.events {
		return
	}
	if err := l.poll.mod(c.fd, ev); err != nil {
		l.cfg.Logger.Error(err.Error())
		l.closeConn(c)
		return
	}
	c.events = ev
}

// wantWrite reports whether c should be watched for writability: while
// output is queued. (Requests waiting for the next turn's budget are in
// the ready queue instead.)
func (c *conn) wantWrite() bool { return c.out.n > 0 }

// shutdownWrite half-closes c (lingering close).
func (l *loop) shutdownWrite(c *conn) bool {
	return unix.Shutdown(c.fd, unix.SHUT_WR) == nil
}

// closeConn closes c now, dropping queued output. While a handler holds c
// the close waits for the response to finish.
func (l *loop) closeConn(c *conn) {
	if c.closed {
		return
	}
	if c.resp != nil {
		c.broken = true
		c.out.reset(&l.core)
		return
	}
	l.release(c)
	l.conns[c.fd] = nil
	rawClose(c.fd)
	l.count.open--
}

// acceptConns accepts until the backlog is empty (EAGAIN).
func (l *loop) acceptConns() {
	for l.lfd >= 0 {
		fd, sa, err := rawAccept4(l.lfd, &l.peer)
		if err != nil {
			l.acceptFailed(err)
			return
		}
		l.acceptOK = true
		if l.cfg.MaxConns > 0 && l.count.open >= l.cfg.MaxConns {
			rawClose(fd)
			l.count.rejected++
			continue
		}
		l.register(fd, sa)
	}
}

// acceptFailed handles an accept error. Running out of descriptors or
// memory pauses accepting for acceptPause, with one log line per episode,
// instead of spinning on a listener that stays readable.
func (l *loop) acceptFailed(err error) {
	switch err {
	case unix.EAGAIN:
		return
	case unix.EINTR, unix.ECONNABORTED, unix.EPERM, unix.EPROTO:
		l.accept = true // try again after this batch's other work
		return
	}
	if l.acceptOK {
		l.acceptOK = false
		l.cfg.Logger.Error("gameserver: accept failed; pausing", "err", err, "pause", acceptPause)
	}
	if l.poll.mod(l.lfd, 0) != nil {
		return
	}
	t := &Timer{c: &l.core, f: l.resumeAccept}
	t.t = timer{when: l.now + int64(acceptPause), index: -1, user: t}
	l.schedule(&t.t)
}

// resumeAccept watches the listener again after a pause.
func (l *loop) resumeAccept() {
	if l.lfd >= 0 {
		l.poll.mod(l.lfd, unix.EPOLLIN)
	}
}

// register starts serving a freshly accepted connection.
func (l *loop) register(fd int, sa *unix.RawSockaddrAny) {
	if err := l.poll.add(fd, unix.EPOLLIN); err != nil {
		rawClose(fd)
		l.cfg.Logger.Error(err.Error())
		return
	}
	c := l.newConn(sockaddrString(sa))
	c.fd, c.events = fd, unix.EPOLLIN
	c.nodelay = sa.Addr.Family == unix.AF_UNIX
	if fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*conn, fd+1-len(l.conns)+len(l.conns)/2)...)
	}
	l.conns[fd] = c
	c.reqStart = l.now
	l.setDeadline(c, after(l.now, l.cfg.ReadHeaderTimeout))
}

// sockaddrString formats a peer address as Request.RemoteAddr.
func sockaddrString(sa *unix.RawSockaddrAny) string {
	switch sa.Addr.Family {
	case unix.AF_INET:
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(in.Addr), port(in.Port)).String()
	case unix.AF_INET6:
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom16(in.Addr).Unmap(), port(in.Port)).String()
	case unix.AF_UNIX:
		path := (*unix.RawSockaddrUnix)(unsafe.Pointer(sa)).Path[:]
		n := 0
		for n < len(path) && path[n] != 0 {
			n++
		}
		if n > 0 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(path[i])
			}
			return string(b)
		}
	}
	return "@"
}

// port converts a port in network byte order.
func port(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// beginDrain starts a graceful shutdown on the loop.
func (l *loop) beginDrain() {
	if l.draining {
		return
	}
	l.draining = true
	l.stopUserTimers()
	l.closeListener()
	for _, c := range l.conns {
		if c != nil {
			l.drainIdle(c)
		}
	}
	if l.count.open == 0 {
		l.stopped = true
	}
}

// forceStop stops the loop at once (Close, or Shutdown's context ending).
func (l *loop) forceStop() { l.stopped = true }

// closeListener stops accepting.
func (l *loop) closeListener() {
	if l.lfd < 0 {
		return
	}
	// Deregister first: epoll forgets a descriptor on close only once no
	// descriptor refers to its socket, and another process (the one taking
	// over a shared listener, see Listen) may still hold one.
	l.poll.ctl(unix.EPOLL_CTL_DEL, l.lfd, 0)
	unix.Close(l.lfd)
	l.lfd = -1
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
}

// teardown closes everything left when the loop stops, or when a
// function on it called runtime.Goexit (then a response may be in
// progress: it is abandoned).
func (l *loop) teardown() {
	l.closeListener()
	for _, c := range l.conns {
		if c != nil {
			c.resp = nil
			l.closeConn(c)
		}
	}
	l.stopUserTimers()
	l.readyQ, l.readySpare = nil, nil
	l.endTurn()
	l.q.stop() // before the eventfd closes: no post may write to it after
	l.poll.close()
	l.end()
}

// onLoop reports whether the caller runs on the loop goroutine: the loop is
// locked to its OS thread, so no other goroutine runs on that thread.
func (c *core) onLoop() bool { return c.loopID.Load() == int64(unix.Gettid()) }
