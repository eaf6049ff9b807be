package gameserver

import (
	"net/netip"
	"time"
)

// The loop's side of the back-end contract (see backend): the back ends
// only wait, accept, read, write and close, and report what happened
// here; every decision taken on a report (the connection cap, write
// deadlines, how much a connection may write in a turn, byte counts,
// TCP_NODELAY, logging once per episode) is made in this file and
// conn.go, once for both back ends.

// admit decides whether a connection just accepted from the client
// address addr (the zero Addr if not IP) is served: false over
// Config.MaxConnsPerAddr, or at Config.MaxConns unless the connection idle
// the longest can be closed to make room (evictIdle), and the back end
// closes it at once, before anything is read. A successful accept also
// ends an episode of accept errors.
func (l *loop) admit(addr netip.Addr) bool {
	l.acceptOK = true
	if l.peers.full(addr) || l.cfg.MaxConns > 0 && l.count.OpenConns >= l.cfg.MaxConns && !l.evictIdle() {
		l.count.RejectedConns++
		return false
	}
	return true
}

// acceptPause is how long a back end stops accepting after accept fails
// for want of descriptors or memory, so the loop does not spin on a
// listener that stays readable (epoll), nor the acceptor on a failing
// accept (portable).
const acceptPause = 100 * time.Millisecond

// acceptFailed is a back end's report that accept failed for want of
// descriptors or memory and that it pauses accepting for acceptPause:
// logged once per episode (until an accept succeeds), not once per try.
func (l *loop) acceptFailed(err error) {
	if l.acceptOK {
		l.acceptOK = false
		l.cfg.Logger.Error("gameserver: accept failed; pausing", "err", err, "pause", acceptPause)
	}
}

// write has the back end write c's queued output, as much as c may write
// in this turn (writeCap, so one client cannot starve the others), and
// reports whether c is still open. It arms the write deadline when output
// starts waiting, and turns Nagle's algorithm off once c is sure to
// outlive this write: a later small write must not wait behind it for a
// delayed ACK, while a connection that closes after one write never needs
// it, which saves the system call on each ab-style request.
func (l *loop) write(c *conn) bool {
	l.turnWrites(c)
	if c.writeDL == 0 {
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
	}
	if !c.nodelay && !c.closeAfter {
		c.nodelay = true
		l.sys.noDelay(c)
	}
	if room := writeCap - c.turnBytes; room > 0 {
		// What the back end reports written during the call counts in
		// the turn's share; an asynchronous write's end, reported on a
		// later turn, starts the next write instead.
		before := l.count.BytesWritten
		l.sys.write(c, room)
		c.turnBytes += int(l.count.BytesWritten - before)
	}
	return c.phase != phaseClosed
}

// turnWrites starts c's count of bytes written in this turn, if it counts
// an earlier one.
func (l *loop) turnWrites(c *conn) {
	if c.writeTurn != l.turn {
		c.writeTurn, c.turnBytes = l.turn, 0
	}
}

// onWritten is a back end's report that n bytes of c's output were
// written: they leave the queue and count in the totals, and the write
// deadline starts again (or ends, with nothing left to write).
func (l *loop) onWritten(c *conn, n int) {
	c.out.consume(n, l)
	l.count.BytesWritten += uint64(n)
	c.writeDL = 0
	if c.out.n > 0 {
		c.writeDL = after(l.now, l.cfg.WriteTimeout)
	}
}

// ioFailed is a back end's report that it could not watch or write c for
// a reason other than the client's going: logged, and c closed.
func (l *loop) ioFailed(c *conn, err error) {
	l.cfg.Logger.Error("gameserver: connection failed", "remote", c.remote, "err", err)
	l.closeConn(c)
}
