package gameserver

import "time"

// Idle connections make room at the connection cap (Config.MaxConns), as
// nginx's reusable connections do (ngx_reusable_connection,
// ngx_drain_connections): a connection waiting for its next request, or
// for its first, is on a list in the order it began to wait, and a
// connection accepted at the cap closes the one that has waited longest
// instead of being refused. Without it, a few client addresses could hold
// every connection with idle keep-alives for the whole IdleTimeout and
// lock every new client out. RFC 9112 section 9.3 lets a server close an
// idle persistent connection at any time; a client retries its request
// on a new one when the old one is closed before the request reached it.
//
// The list is intrusive (two pointers in each conn) and kept in step with
// the connection's state where that changes: a connection joins it when
// it becomes idle (opened, rearm), and leaves it when input arrives
// (onInput) or its phase changes (enter), so joining, leaving and finding
// the oldest are O(1) and nothing is scanned.

// minEvictIdle is how long a connection must have been idle before it may
// be closed to make room: the client of a connection just answered is
// likely to send its next request within a round trip or a page's
// subresources, and a request already on its way would be met by a reset.
// Under it, a connection at the cap is refused as before.
const minEvictIdle = time.Second

// evictTries bounds the idle connections one admission looks at, when the
// oldest turn out not to be idle any more (a request had arrived).
const evictTries = 4

// idleConns is the list of idle connections, the loop's: newest first,
// oldest last.
type idleConns struct {
	newest, oldest *conn
}

// idleLink is a conn's place in the loop's idleConns.
type idleLink struct {
	newer, older *conn
	since        int64 // loop clock when the connection became idle
}

// add puts c at the newest end, idle since now, unless it is listed
// already: a connection idle since earlier keeps its place.
func (q *idleConns) add(c *conn, now int64) {
	if c.idleListed {
		return
	}
	c.idleListed, c.lru.since = true, now
	c.lru.older, c.lru.newer = q.newest, nil
	if q.newest != nil {
		q.newest.lru.newer = c
	} else {
		q.oldest = c
	}
	q.newest = c
}

// remove takes c off the list, if it is on it.
func (q *idleConns) remove(c *conn) {
	if !c.idleListed {
		return
	}
	if c.lru.newer != nil {
		c.lru.newer.lru.older = c.lru.older
	} else {
		q.newest = c.lru.older
	}
	if c.lru.older != nil {
		c.lru.older.lru.newer = c.lru.newer
	} else {
		q.oldest = c.lru.newer
	}
	c.lru = idleLink{}
	c.idleListed = false
}

// noteIdle puts c on the idle list if it is idle, and takes it off if not.
func (l *loop) noteIdle(c *conn) {
	if c.idle() {
		l.idle.add(c, l.now)
	} else {
		l.idle.remove(c)
	}
}

// evictIdle makes room for a connection accepted at Config.MaxConns by
// closing the connection idle the longest, if it has been idle for
// minEvictIdle, and reports whether it made room. It first reads what
// the candidate's socket holds (readNow), as the drain does (expire): a
// request found there is served, and the next oldest is tried instead. A
// candidate whose socket still holds unread bytes (the portable back
// end's reader has them) is passed over too.
func (l *loop) evictIdle() bool {
	c := l.idle.oldest
	for range evictTries {
		if c == nil || l.now-c.lru.since < int64(minEvictIdle) {
			return false
		}
		l.sys.readNow(c)
		switch {
		case c.phase == phaseClosed:
			return true // the read found the client gone
		case c.idle() && l.sys.unread(c) == 0:
			l.closeConn(c)
			l.count.EvictedIdleConns++
			return true
		case c.idleListed:
			c = c.lru.newer
		default:
			c = l.idle.oldest
		}
	}
	return false
}
