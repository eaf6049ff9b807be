package gameserver

import "net"

// backend is what a back end gives the loop. The loop (turn.go, conn.go)
// owns every connection's state and makes every decision; a back end only
// moves bytes and reports readiness. There are two: epoll on Linux
// (backend_linux.go) and the net package elsewhere, or with the build tag
// gameserver_portable (backend_portable.go). Each defines backendSys, the
// type the loop holds, and connSys, its part of a conn.
//
// Every method runs on the loop goroutine. The back end reports to the
// loop from dispatch, by calling:
//
//	l.opened(c)         a connection was accepted (c from l.newConn)
//	l.onInput(c, p)     bytes were read; p is valid until the call returns
//	l.onEOF(c)          the client closed its write side
//	l.onHangup(c)       the connection is gone: reset, error, or EPOLLHUP;
//	                    also EPOLLRDHUP while a response is held (deferred
//	                    or streaming), when nothing else reads the socket
//	l.onWritable(c)     the socket takes output again (EPOLLOUT), or an
//	                    asynchronous write ended
//
// and it never writes, serves or closes on its own: write, watch and
// closeConn are the loop's to call, once per turn for each connection
// with output (see loop.flushPending).
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
	dispatch() (woke bool)
	// write writes c's queued output as far as the socket takes it now
	// (at most writeCap per connection per turn). It reports false if c
	// failed and was closed.
	write(c *conn) bool
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
