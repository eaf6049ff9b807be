//go:build linux && !gameserver_portable

package gameserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// connSys is the Linux back end's part of a conn.
type connSys struct {
	fd      int
	events  uint32 // epoll interest registered now
	watched bool   // fd is in the epoll set (see register)
	evTurn  uint64 // loop turn in which an event of c's was handled or left to the next turn (see dispatch)
}

// writeInFlight reports whether a write still reads c's output buffers:
// never here, writes are synchronous.
func (c *connSys) writeInFlight() bool { return false }

// backendSys is the back end the loop holds.
type backendSys = epollBackend

// epollBackend is the Linux back end: non-blocking sockets in one
// level-triggered epoll set, served by the loop goroutine itself.
type epollBackend struct {
	l          *loop
	poll       poller
	lfd        int                 // our duplicate of the listener's descriptor, -1 when closed
	ln         net.Listener        // kept open until the end only for Unix sockets (see listen)
	conns      []*conn             // by file descriptor
	rbuf       []byte              // the one read buffer, shared by every connection
	oob        [64]byte            // a sampled read's control messages: the kernel's receive timestamp (see readStamped)
	iov        [][]byte            // segments of the next write
	iovecs     []unix.Iovec        // writev's view of iov
	peer       unix.RawSockaddrAny // accept4's peer address
	evs        []unix.EpollEvent   // the events of the last wait
	left       []leftEvent         // events a turn past turnBudget left to the next, in the order they came (see dispatch)
	spare      []leftEvent         // the previous turn's left, reused
	accept     bool                // the listener fired this turn, or a turn left it
	acceptLeft bool                // the last turn left the listener's event: accept whatever the budget
	leftAt     int64               // while a left event is handled, its leftEvent.at
	early      bool                // the listener has TCP_DEFER_ACCEPT: an accepted connection has data (see register)
	port       int                 // the listener's TCP port; 0 for a Unix socket
	// acceptBatch is how many connections a listener event accepts (see
	// acceptReady).
	acceptBatch int
}

// deferAccept is the listener's TCP_DEFER_ACCEPT, in seconds: the kernel
// hands the loop a connection only once its first bytes have arrived (as
// nginx's listen ... deferred), or, for a client that stays silent, after
// about this long.
const deferAccept = 1

func (b *epollBackend) init(l *loop) func() {
	b.l = l
	b.poll.epfd, b.poll.wakefd, b.lfd = -1, -1, -1
	return b.poll.wake
}

// self is the calling OS thread: the loop is locked to its thread, so no
// other goroutine runs on it.
func (b *epollBackend) self() int64 { return int64(unix.Gettid()) }

func (b *epollBackend) open() error {
	b.rbuf = make([]byte, readBufSize)
	return b.poll.open()
}

func (b *epollBackend) close() { b.poll.close() }

func (b *epollBackend) wait(msec int) error {
	evs, err := b.poll.wait(msec)
	b.evs = evs
	return err
}

// listen duplicates ln's descriptor for epoll, so Go's netpoller and ours
// never watch the same descriptor. A TCP listener is closed at once (its
// descriptor leaves Go's netpoller, and the socket lives on in ours); a
// Unix one stays open until the end so closing it does not unlink the
// socket file while we serve.
func (b *epollBackend) listen(ln net.Listener) error {
	fd, err := dupFD(ln)
	if err != nil {
		ln.Close()
		return err
	}
	b.lfd = fd
	if _, ok := ln.(*net.UnixListener); ok {
		b.ln = ln
	} else {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			b.port = a.Port
		}
		ln.Close()
		b.early = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, deferAccept) == nil
		// Accepted sockets inherit it: the kernel stamps what they
		// receive, for the wait attribution (readStamped).
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		forgetSYNFilter(fd)
	}
	return b.poll.add(fd, unix.EPOLLIN)
}

// refuseHandshakes attaches the SYN filter to the listener
// (backend.refuseHandshakes).
func (b *epollBackend) refuseHandshakes() bool {
	return b.lfd >= 0 && b.port != 0 && refuseSYN(b.lfd) == nil
}

// handshaking asks the kernel about handshakes to the listener's port
// (backend.handshaking).
func (b *epollBackend) handshaking() (bool, error) {
	if b.lfd < 0 || b.port == 0 {
		return false, nil
	}
	return handshaking(b.port)
}

// acceptQueued accepts until the accept queue is empty
// (backend.acceptQueued).
func (b *epollBackend) acceptQueued() { b.acceptConns() }

// unread is the socket's receive queue (backend.unread).
func (b *epollBackend) unread(c *conn) int { return unreadBytes(c.fd) }

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

// leftEvent is a connection's readiness event a turn left to the next:
// kept with the connection it was for, not its descriptor, which may be
// another connection's by the time it is served.
type leftEvent struct {
	c  *conn
	ev uint32
	at int64 // loop clock at the start of the turn that left it: its bytes had arrived by then
}

// dispatch handles the events the last turn left, in the order they came,
// then the batch wait returned. Past turnBudget (the first event always
// runs) the connections' events not yet served are left to the next
// turn, which serves them first: with level-triggered epoll, an event
// returned and not served goes to the back of the kernel's ready list,
// behind the connections that became ready later, so leaving it to the
// next wait would let those overtake it. The wake-up and the listener
// are noted whatever the budget; the listener is served last, so a
// descriptor closed in this batch cannot be reused by a new connection
// while its events are still being handled, and past the budget it too
// waits for the next turn (which accepts first thing after its events,
// whatever the budget). An event left for a connection closed meanwhile
// is dropped, and one left for an interest since withdrawn is masked
// off: epoll reports it again if it still holds.
func (b *epollBackend) dispatch() (woke bool) {
	l := b.l
	served := 0
	left := b.left
	b.left = b.spare[:0]
	for i, e := range left {
		left[i] = leftEvent{}
		c := e.c
		if c.phase == phaseClosed {
			continue
		}
		c.evTurn = l.turn
		if served > 0 && l.overBudget() {
			b.left = append(b.left, e)
			continue
		}
		served++
		b.leftAt = e.at
		b.onEvent(c, e.ev&(c.events|unix.EPOLLERR|unix.EPOLLHUP))
		b.leftAt = 0
	}
	b.spare = left[:0]
	for i := range b.evs {
		fd, ev := int(b.evs[i].Fd), b.evs[i].Events
		switch {
		case fd == b.poll.wakefd:
			woke = true
		case fd == b.lfd:
			b.accept = true
		case fd < len(b.conns) && b.conns[fd] != nil:
			c := b.conns[fd]
			if c.evTurn == l.turn {
				continue // served or left already this turn; epoll reports it again if it still holds
			}
			c.evTurn = l.turn
			if served > 0 && l.overBudget() {
				b.left = append(b.left, leftEvent{c, ev, l.now})
				continue
			}
			served++
			b.onEvent(c, ev)
		}
	}
	b.evs = nil
	if b.accept {
		if b.acceptLeft || served == 0 || !l.overBudget() {
			b.accept, b.acceptLeft = false, false
			b.acceptReady()
		} else {
			b.acceptLeft = true
		}
	}
	if woke {
		b.poll.drainWake()
	}
	return woke
}

// leftover reports whether the last turn left events (backend.leftover).
func (b *epollBackend) leftover() bool { return len(b.left) > 0 || b.acceptLeft }

// onEvent is one connection's readiness.
func (b *epollBackend) onEvent(c *conn, ev uint32) {
	l := b.l
	switch {
	case ev&(unix.EPOLLERR|unix.EPOLLHUP) != 0:
		// Both directions are shut or the connection was reset: nothing
		// queued can reach the client any more.
		l.onHangup(c)
	case ev&unix.EPOLLRDHUP != 0 && c.held():
		// Only a held connection watches EPOLLRDHUP without EPOLLIN
		// (see watch): its client has gone.
		l.onHangup(c)
	default:
		if ev&unix.EPOLLOUT != 0 && c.wantWrite() {
			l.onWritable(c)
		}
		if ev&unix.EPOLLIN != 0 && (ev&unix.EPOLLOUT == 0 || c.wantRead()) {
			b.read(c)
		}
	}
}

// read reads once into the shared buffer; level-triggered epoll reports
// the connection again if more is waiting.
func (b *epollBackend) read(c *conn) {
	var n int
	var err error
	if b.l.wait.on {
		n, err = b.readStamped(c)
		if b.leftAt != 0 && (c.arrived == 0 || b.leftAt < c.arrived) {
			c.arrived = b.leftAt // the bytes of an event a turn left came before that turn at the latest
		}
	} else {
		n, err = rawRead(c.fd, b.rbuf)
	}
	switch {
	case err == nil && n > 0:
		b.l.onInput(c, b.rbuf[:n])
	case err == nil:
		b.l.onEOF(c)
	case err == unix.EAGAIN || err == unix.EINTR:
	default:
		b.l.onHangup(c)
	}
}

// readStamped is read's system call in a turn the wait attribution
// samples: a recvmsg that also takes the kernel's receive timestamp of
// the last bytes read (SO_TIMESTAMPNS, set on the listener), kept in
// c.arrived on the loop clock, so that a request that arrived while the
// loop ran an earlier turn's handlers waits from its arrival, not from
// the turn that read it (see WaitStats). Without a timestamp (a Unix
// socket, a kernel that gives none) c.arrived is 0.
func (b *epollBackend) readStamped(c *conn) (int, error) {
	c.arrived = 0
	iov := unix.Iovec{Base: &b.rbuf[0]}
	iov.SetLen(len(b.rbuf))
	msg := unix.Msghdr{Iov: &iov, Iovlen: 1, Control: &b.oob[0]}
	msg.SetControllen(len(b.oob))
	n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(c.fd), uintptr(unsafe.Pointer(&msg)), 0)
	if errno != 0 {
		return 0, errno
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b.oob[0]))
	if int(msg.Controllen) >= unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))) &&
		h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS {
		ts := (*unix.Timespec)(unsafe.Pointer(&b.oob[unix.CmsgLen(0)]))
		c.arrived = b.l.onLoopClock(ts.Nano())
	}
	return int(n), nil
}

// write writes at most limit bytes of c's queued output, until the
// kernel stops taking it, reporting each write (loop.onWritten) or the
// failure (loop.onHangup).
func (b *epollBackend) write(c *conn, limit int) {
	l := b.l
	for c.out.n > 0 && limit > 0 {
		b.iov = c.out.iovecs(b.iov[:0], limit)
		want := iovLen(b.iov)
		n, err := b.writev(c.fd, b.iov)
		clear(b.iov)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			l.onHangup(c)
			return
		}
		limit -= n
		l.onWritten(c, n)
		if n < want {
			break // the socket buffer is full: wait for EPOLLOUT
		}
	}
}

// noDelay sets TCP_NODELAY on c (backend.noDelay).
func (b *epollBackend) noDelay(c *conn) {
	syscall.SetsockoptInt(c.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
}

// writev writes the segments with one system call, through a reused
// iovec array (unix.Writev allocates one per call).
func (b *epollBackend) writev(fd int, iov [][]byte) (int, error) {
	if len(iov) == 1 {
		return rawWrite(fd, iov[0])
	}
	b.iovecs = b.iovecs[:0]
	for _, p := range iov {
		v := unix.Iovec{Base: &p[0]}
		v.SetLen(len(p))
		b.iovecs = append(b.iovecs, v)
	}
	n, err := rawWritev(fd, b.iovecs)
	clear(b.iovecs)
	return n, err
}

func iovLen(iov [][]byte) int {
	n := 0
	for _, b := range iov {
		n += len(b)
	}
	return n
}

// watch registers the interest c's state calls for, with an epoll_ctl
// only when it changes: EPOLLIN while c reads, EPOLLOUT while output is
// queued, and EPOLLRDHUP alone while a response is held, so that a client
// that goes away is noticed at once without reading the requests it
// pipelined (EPOLLHUP and EPOLLERR are always reported).
func (b *epollBackend) watch(c *conn) {
	var ev uint32
	if c.wantRead() {
		ev |= unix.EPOLLIN
	}
	if c.wantWrite() {
		ev |= unix.EPOLLOUT
	}
	if c.held() && !c.eof {
		ev |= unix.EPOLLRDHUP
	}
	if ev == c.events && c.watched {
		return
	}
	if !c.watched {
		if err := b.poll.add(c.fd, ev); err != nil {
			b.l.ioFailed(c, err)
			return
		}
		c.events, c.watched = ev, true
		return
	}
	if err := b.poll.mod(c.fd, ev); err != nil {
		b.l.ioFailed(c, err)
		return
	}
	c.events = ev
}

// readNow reads c once (backend.readNow).
func (b *epollBackend) readNow(c *conn) { b.read(c) }

// shutdownWrite half-closes c (lingering close).
func (b *epollBackend) shutdownWrite(c *conn) bool {
	return unix.Shutdown(c.fd, unix.SHUT_WR) == nil
}

// closeConn closes c's descriptor, which also removes it from the epoll
// set (the loop holds the only reference to it).
func (b *epollBackend) closeConn(c *conn) {
	b.conns[c.fd] = nil
	rawClose(c.fd)
}

// each calls f for every open connection.
func (b *epollBackend) each(f func(*conn)) {
	for _, c := range b.conns {
		if c != nil {
			f(c)
		}
	}
}

// acceptConns accepts until the backlog is empty (EAGAIN); the loop
// admits each (loop.admit) or it is closed at once.
func (b *epollBackend) acceptConns() { b.acceptUpTo(-1, false) }

// maxAcceptBatch bounds acceptBatch.
const maxAcceptBatch = 64

// acceptReady accepts for a listener event: as many connections as the
// last event found queued (acceptBatch), without the accept that only
// finds the queue empty when they keep coming one at a time (ab -c 12);
// level-triggered epoll reports the listener again if more wait. A batch
// that did not empty the queue doubles the next. An accepted connection's
// first request is read and served at once (see register), so past
// turnBudget (after the first) the rest wait for the next turn, which
// accepts first thing after the events this one left.
func (b *epollBackend) acceptReady() {
	n, empty, cut := b.acceptUpTo(max(b.acceptBatch, 1), true)
	switch {
	case empty:
		b.acceptBatch = max(n, 1)
	case cut:
		b.accept, b.acceptLeft = true, true
	default:
		b.acceptBatch = min(2*max(b.acceptBatch, 1), maxAcceptBatch)
	}
}

// acceptUpTo accepts at most limit connections (-1: no limit), and with
// budget no more once the turn is past turnBudget (the first always),
// reporting how many, whether it found the queue empty, and whether the
// budget cut it short.
func (b *epollBackend) acceptUpTo(limit int, budget bool) (n int, empty, cut bool) {
	for ; b.lfd >= 0 && n != limit; n++ {
		if budget && n > 0 && b.l.overBudget() {
			return n, false, true
		}
		fd, sa, err := rawAccept4(b.lfd, &b.peer)
		if err != nil {
			b.acceptError(err)
			return n, true, false
		}
		if !b.l.admit(sockaddrIP(sa)) {
			rawClose(fd)
			continue
		}
		b.register(fd, sa)
	}
	return n, false, false
}

// acceptError handles an accept error. Running out of descriptors or
// memory pauses accepting for acceptPause, reported to the loop
// (loop.acceptFailed), instead of spinning on a listener that stays
// readable.
func (b *epollBackend) acceptError(err error) {
	switch err {
	case unix.EAGAIN:
		return
	case unix.EINTR, unix.ECONNABORTED, unix.EPERM, unix.EPROTO:
		b.accept = true // try again after this batch's other work
		return
	}
	b.l.acceptFailed(err)
	if b.poll.mod(b.lfd, 0) == nil {
		b.l.afterLoop(acceptPause, b.resumeAccept)
	}
}

// resumeAccept watches the listener again after a pause.
func (b *epollBackend) resumeAccept() {
	if b.lfd >= 0 {
		b.poll.mod(b.lfd, unix.EPOLLIN)
	}
}

// register starts serving a freshly accepted connection.
//
// Under TCP_DEFER_ACCEPT the request has usually arrived by now, so it is
// read at once, and the connection joins the epoll set only when it has
// to wait (watch): a request answered with "Connection: close" (ab
// without -k) then costs no epoll_ctl and no extra turn.
func (b *epollBackend) register(fd int, sa *unix.RawSockaddrAny) {
	c := b.l.newConn(sockaddrString(sa), sockaddrIP(sa))
	c.fd = fd
	c.nodelay = sa.Addr.Family == unix.AF_UNIX
	if fd >= len(b.conns) {
		b.conns = append(b.conns, make([]*conn, fd+1-len(b.conns)+len(b.conns)/2)...)
	}
	b.conns[fd] = c
	b.l.opened(c)
	if b.early {
		b.read(c)
	}
	if c.phase != phaseClosed && !c.marked {
		b.watch(c) // nothing read: wait for it (marked ones are watched by flushPending)
	}
}

// sockaddrIP returns a peer's IP address, or the zero Addr if it has
// none (a Unix socket).
func sockaddrIP(sa *unix.RawSockaddrAny) netip.Addr {
	switch sa.Addr.Family {
	case unix.AF_INET:
		return netip.AddrFrom4((*unix.RawSockaddrInet4)(unsafe.Pointer(sa)).Addr)
	case unix.AF_INET6:
		return netip.AddrFrom16((*unix.RawSockaddrInet6)(unsafe.Pointer(sa)).Addr).Unmap()
	}
	return netip.Addr{}
}

// sockaddrString formats a peer address as Request.RemoteAddr.
func sockaddrString(sa *unix.RawSockaddrAny) string {
	switch sa.Addr.Family {
	case unix.AF_INET:
		return netip.AddrPortFrom(sockaddrIP(sa), port((*unix.RawSockaddrInet4)(unsafe.Pointer(sa)).Port)).String()
	case unix.AF_INET6:
		return netip.AddrPortFrom(sockaddrIP(sa), port((*unix.RawSockaddrInet6)(unsafe.Pointer(sa)).Port)).String()
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

// closeListener stops accepting.
func (b *epollBackend) closeListener() {
	if b.lfd < 0 {
		return
	}
	// Deregister first: epoll forgets a descriptor on close only once no
	// descriptor refers to its socket, and another process (the one taking
	// over a shared listener, see Listen) may still hold one.
	b.poll.ctl(unix.EPOLL_CTL_DEL, b.lfd, 0)
	unix.Close(b.lfd)
	b.lfd = -1
	if b.ln != nil {
		b.ln.Close()
		b.ln = nil
	}
}
