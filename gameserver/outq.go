package gameserver

import (
	"runtime/debug"
	"unsafe"
)

// getBuf returns an empty pooled buffer of capacity bufSize.
func (l *loop) getBuf() []byte {
	if n := len(l.free); n > 0 {
		b := l.free[n-1]
		l.free = l.free[:n-1]
		return b
	}
	return make([]byte, 0, bufSize)
}

// putBuf returns b to the pool if it came from there.
func (l *loop) putBuf(b []byte) {
	if cap(b) == bufSize && len(l.free) < maxFreeBufs {
		l.free = append(l.free, b[:0])
	}
}

// outq is a connection's queued output: a list of segments written with
// write or writev. Small pieces are copied into pooled bufSize buffers;
// large bodies are handed over whole (take), never copied.
type outq struct {
	segs     [][]byte // segs[head][off:] is the next byte to send
	head     int
	off      int
	n        int        // bytes queued
	mem      int        // bytes of memory held: bufSize per pooled buffer (shared ones are not this queue's)
	ext      int        // bytes of memory the other segments reference: their capacity (see held)
	budget   *outBudget // the server's account of every queue's mem
	tailOpen bool       // the last segment is a pooled buffer that write may append to
}

// outBudget is the server-wide account of the memory output queues hold
// (Config.MaxOutputBytes). Only the loop touches it.
type outBudget struct {
	mem  int // bytes held by every connection's output queue
	max  int // over it, no connection with output pending is read or served; <= 0: no limit
	peak int // the most held since memory was last given back (see release)
}

// over reports whether the queues hold more than the budget.
func (b *outBudget) over() bool { return b != nil && b.max > 0 && b.mem > b.max }

// hold accounts for n bytes more (or fewer, n < 0) held by q.
func (q *outq) hold(n int) {
	q.mem += n
	if b := q.budget; b != nil {
		b.mem += n
		b.peak = max(b.peak, b.mem)
	}
}

// segSize is what one segment costs in a queue's list of segments.
const segSize = int(unsafe.Sizeof([]byte(nil)))

// held is the memory the queue keeps alive: its pooled buffers whole, the
// capacity of every other segment it holds (a body handed over, an event
// shared with other streams by Broadcast, counted in full here because
// this queue alone may be what keeps it), and its list of segments. It
// bounds an event stream (Config.StreamBuffer); the server-wide budget
// counts the pooled buffers only (mem), since shared segments would be
// counted once per queue holding them there.
func (q *outq) held() int { return q.mem + q.ext + cap(q.segs)*segSize }

// tailRoom is how many bytes write can add to the last segment without a
// new buffer.
func (q *outq) tailRoom() int {
	if !q.tailOpen {
		return 0
	}
	return bufSize - len(q.segs[len(q.segs)-1])
}

// Giving memory back after a burst: once the queues held releaseAt or
// more and have drained to a quarter of that peak, the runtime is asked to
// return freed memory to the OS at once (debug.FreeOSMemory, on a
// goroutine of its own) instead of over minutes of background scavenging.
const releaseAt = 64 << 20

// release gives memory back if a large backlog has drained. The loop
// calls it once per turn.
func (b *outBudget) release() {
	if b.peak < releaseAt || b.mem > b.peak/4 {
		return
	}
	b.peak = b.mem
	go debug.FreeOSMemory()
}

// write queues a copy of p.
func (q *outq) write(p []byte, l *loop) {
	q.n += len(p)
	for len(p) > 0 {
		if !q.tailOpen || len(q.segs[len(q.segs)-1]) == bufSize {
			q.segs = append(q.segs, l.getBuf())
			q.hold(bufSize)
			q.tailOpen = true
		}
		tail := &q.segs[len(q.segs)-1]
		k := min(len(p), bufSize-len(*tail))
		*tail = append(*tail, p[:k]...)
		p = p[k:]
	}
}

// push queues buf itself, handing it over: it goes back to the pool once
// written. A pooled buffer's room after its bytes takes what write queues
// next (the following response's header, say), so a response of a body
// under bufSize costs one buffer, not two.
func (q *outq) push(buf []byte) {
	if len(buf) == 0 {
		return
	}
	q.segs = append(q.segs, buf)
	q.n += len(buf)
	q.tailOpen = pooled(buf)
	if q.tailOpen {
		q.hold(bufSize)
	} else {
		q.ext += cap(buf)
	}
}

// pooled reports whether b is one of the pool's buffers (getBuf).
func pooled(b []byte) bool { return cap(b) == bufSize }

// pushShared queues buf, which other queues may hold too and nobody
// changes again (Broadcast): it is never pooled. Its capacity is kept, as
// the memory it holds (see held), but write never appends to it. Pooled
// buffers are known by their capacity, bufSize, so a shared buffer of that
// capacity is queued as two segments whose capacities differ from it.
func (q *outq) pushShared(buf []byte) {
	if cap(buf) == bufSize {
		q.push(buf[:1:1])
		buf = buf[1:]
	}
	q.push(buf)
}

// iovecs returns up to maxIovecs segments holding at most limit bytes from
// the head of the queue, appended to dst.
func (q *outq) iovecs(dst [][]byte, limit int) [][]byte {
	off := q.off
	for _, s := range q.segs[q.head:] {
		if len(dst) == maxIovecs || limit <= 0 {
			break
		}
		s = s[off:]
		off = 0
		if len(s) > limit {
			s = s[:limit]
		}
		dst = append(dst, s)
		limit -= len(s)
	}
	return dst
}

// consume drops n written bytes, returning emptied buffers to the pool.
func (q *outq) consume(n int, l *loop) {
	q.n -= n
	for n > 0 {
		rest := len(q.segs[q.head]) - q.off
		if n < rest {
			q.off += n
			return
		}
		n -= rest
		if pooled(q.segs[q.head]) {
			q.hold(-bufSize)
		} else {
			q.ext -= cap(q.segs[q.head])
		}
		l.putBuf(q.segs[q.head])
		q.segs[q.head] = nil
		q.head++
		q.off = 0
	}
	if q.head == len(q.segs) {
		q.segs, q.head, q.tailOpen = q.segs[:0], 0, false
	}
}

// reset drops everything queued.
func (q *outq) reset(l *loop) {
	for _, s := range q.segs[q.head:] {
		l.putBuf(s)
	}
	clear(q.segs)
	q.abandon()
}

// abandon forgets everything queued without pooling its buffers (a write
// in flight may still read them).
func (q *outq) abandon() {
	q.hold(-q.mem)
	*q = outq{segs: q.segs[:0], budget: q.budget}
}
