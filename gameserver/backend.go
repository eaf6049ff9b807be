package gameserver

import "net"

// backend is what a back end gives the loop. A back end only waits,
// accepts, reads, writes and closes, and reports what happened; the loop
// owns every connection's state and makes every decision (turn.go,
// conn.go, report.go): which connection is admitted (Config.MaxConns,
// MaxConnsPerAddr), write deadlines, how much a connection writes in a
// turn, the byte counts, TCP_NODELAY, what is logged and how often. There
// are two back ends: epoll on Linux (backend_linux.go) and the net package
// elsewhere, or with the build tag gameserver_portable
// (backend_portable.go). Each
// defines backendSys, the type the loop holds, and connSys, its part of a
// conn. The same conformance suite (backend_conformance_test.go) runs on
// both: go test ./gameserver, and go test -tags gameserver_portable
// ./gameserver.
//
// Every method runs on the loop goroutine. The back end reports to the
// loop from dispatch (and from write, acceptQueued and readNow), by
// calling:
//
//	l.admit(a)             a connection was accepted from address a: serve
//	                       it? (false: close it at once)
//	l.opened(c)            an admitted connection is set up (c from
//	                       l.newConn, given the same address)
//	l.acceptFailed(e)      accept failed for want of resources; the back
//	                       end pauses accepting for acceptPause
//	l.onInput(c, p)        bytes were read; p is valid until the call
//	                       returns
//	l.onEOF(c)             the client closed its write side
//	l.onHangup(c)          the connection is gone: reset, error, or
//	                       EPOLLHUP; also EPOLLRDHUP while a response is
//	                       held (deferred or streaming), when nothing else
//	                       reads the socket
//	l.onWritten(c, n)      n bytes of c's output were written (the loop
//	                       consumes them from c.out)
//	l.onWritable(c)        the socket takes output again (EPOLLOUT), or an
//	                       asynchronous write ended
//	l.ioFailed(c, err)     watching c failed for a reason of the system's
//	l.writeEnded(c)        an asynchronous write on c, closed meanwhile,
//	                       has ended: it no longer reads c's buffers
//
// and it never writes, serves or closes on its own: write and closeConn
// are the loop's to call, once per turn for each connection with output
// (see loop.flushPending), and so is watch for every connection the loop
// marked (loop.mark). A back end calls watch itself in one case only:
// after a report that left a connection unmarked (a connection just
// registered with nothing read, or a read whose bytes the loop kept
// without marking it), since the loop settles only what it marked.
type backend interface {
	// init is called once, by New; it returns the wake function, which
	// makes a wait in progress (or the next one) return, from any
	// goroutine.
	init(l *loop) (wake func())
	// self identifies the calling OS thread or goroutine, for onLoop.
	self() int64
	// open prepares the poller, on the loop goroutine, before begin.
	open() error
	// listen starts accepting on ln, which it now owns.
	listen(ln net.Listener) error
	// wait blocks until the back end has events, the loop is woken, or
	// msec milliseconds pass (-1: no limit, 0: do not block).
	wait(msec int) error
	// dispatch handles the events wait found, reporting them to the loop,
	// and reports whether the loop was woken (posted work is waiting).
	// Past turnBudget (loop.overBudget; the first event always) it leaves
	// the connections' events it has not handled to the next turn, whose
	// dispatch handles them before any that came later.
	dispatch() (woke bool)
	// leftover reports whether the last dispatch left events to the next
	// turn that its wait would not find again: then the loop does not
	// sleep.
	leftover() bool
	// write writes at most limit bytes of c's queued output, as far as
	// the socket takes them now, reporting each write with onWritten (at
	// once, or on a later turn for an asynchronous write) and a failure
	// with onHangup. It leaves c.out to onWritten.
	write(c *conn, limit int)
	// noDelay turns Nagle's algorithm off for c (TCP_NODELAY), where it
	// is not off already; the loop decides when.
	noDelay(c *conn)
	// watch makes the back end's interest in c match c's state:
	// c.wantRead, c.wantWrite, and hang-ups while c.held.
	watch(c *conn)
	// readNow reads what c's socket holds now, once, without blocking,
	// and reports it as dispatch would: the drain reads an idle connection
	// this way before it closes it (see loop.expire). The portable back
	// end's readers report what arrives on their own, so there it does
	// nothing.
	readNow(c *conn)
	// unread returns how many bytes c's socket has received that the
	// loop has not been given yet (0 if it cannot tell).
	unread(c *conn) int
	// refuseHandshakes makes the listening socket drop new handshakes,
	// while those under way still complete into its accept queue, and
	// reports whether it could (see handshake_linux.go).
	refuseHandshakes() bool
	// handshaking reports whether a handshake to the listener may still
	// complete into its accept queue.
	handshaking() (bool, error)
	// acceptQueued accepts the connections queued on the listener now,
	// reporting each as dispatch would.
	acceptQueued()
	// shutdownWrite half-closes c (the lingering close) and reports
	// whether it could.
	shutdownWrite(c *conn) bool
	// closeConn closes c's socket and forgets c; the loop has already
	// dropped c's state (loop.closeConn).
	closeConn(c *conn)
	// closeListener stops accepting. It is idempotent.
	closeListener()
	// each calls f for every open connection; f may close it.
	each(f func(*conn))
	// close releases the poller, after the listener and every
	// connection, once the post queue has stopped (no wake can follow).
	close()
}

var _ backend = (*backendSys)(nil)
