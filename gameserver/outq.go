package gameserver

// getBuf returns an empty pooled buffer of capacity bufSize.
func (c *core) getBuf() []byte {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		return b
	}
	return make([]byte, 0, bufSize)
}

// putBuf returns b to the pool if it came from there.
func (c *core) putBuf(b []byte) {
	if cap(b) == bufSize && len(c.free) < maxFreeBufs {
		c.free = append(c.free, b[:0])
	}
}

// outq is a connection's queued output: a list of segments written with
// write or writev. Small pieces are copied into pooled bufSize buffers;
// large bodies are handed over whole (take), never copied.
type outq struct {
	segs     [][]byte // segs[head][off:] is the next byte to send
	head     int
	off      int
	n        int  // bytes queued
	tailOpen bool // the last segment is a pooled buffer that write may append to
}

// write queues a copy of p.
func (q *outq) write(p []byte, c *core) {
	q.n += len(p)
	for len(p) > 0 {
		if !q.tailOpen || len(q.segs[len(q.segs)-1]) == bufSize {
			q.segs = append(q.segs, c.getBuf())
			q.tailOpen = true
		}
		tail := &q.segs[len(q.segs)-1]
		k := min(len(p), bufSize-len(*tail))
		*tail = append(*tail, p[:k]...)
		p = p[k:]
	}
}

// push queues buf itself, handing it over: it goes back to the pool once
// written.
func (q *outq) push(buf []byte) {
	if len(buf) == 0 {
		return
	}
	q.segs = append(q.segs, buf)
	q.n += len(buf)
	q.tailOpen = false
}

// pushShared queues buf, which other queues may hold too and nobody
// changes again (Broadcast): it is never pooled. Pooled buffers are known
// by their capacity, bufSize, so a shared buffer of that capacity is queued
// as two segments whose capacities differ from it.
func (q *outq) pushShared(buf []byte) {
	buf = buf[:len(buf):len(buf)]
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
func (q *outq) consume(n int, c *core) {
	q.n -= n
	for n > 0 {
		rest := len(q.segs[q.head]) - q.off
		if n < rest {
			q.off += n
			return
		}
		n -= rest
		c.putBuf(q.segs[q.head])
		q.segs[q.head] = nil
		q.head++
		q.off = 0
	}
	if q.head == len(q.segs) {
		q.segs, q.head, q.tailOpen = q.segs[:0], 0, false
	}
}

// reset drops everything queued.
func (q *outq) reset(c *core) {
	for _, s := range q.segs[q.head:] {
		c.putBuf(s)
	}
	clear(q.segs)
	*q = outq{segs: q.segs[:0]}
}
