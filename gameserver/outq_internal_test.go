package gameserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBackedUp(t *testing.T) {
	// Ensure a connection is held back while it has output pending and
	// either its own queue and input take over highWater of memory or the
	// server's queues together are over the budget, and never while it
	// has nothing pending; and that the budget follows what queues hold.
	var l loop
	budget := &outBudget{max: 64 << 10}
	a := &conn{out: outq{budget: budget}}
	b := &conn{out: outq{budget: budget}}
	assert.False(t, a.backedUp(), "nothing pending")

	a.out.write(make([]byte, 100), &l)
	assert.Equal(t, bufSize, a.out.mem, "a pooled buffer is held whole")
	assert.Equal(t, bufSize, budget.mem)
	assert.False(t, a.backedUp())
	a.in = make([]byte, 0, highWater)
	assert.True(t, a.backedUp(), "queued output plus the input held behind it")
	a.in = nil

	for range 4 {
		buf := l.getBuf()
		b.out.push(append(buf, make([]byte, bufSize)...))
	}
	assert.Equal(t, 5*bufSize, budget.mem)
	assert.True(t, budget.over())
	assert.True(t, a.backedUp(), "over the server's budget, with output pending")
	c := &conn{out: outq{budget: budget}}
	assert.False(t, c.backedUp(), "over the budget, but nothing pending")

	b.out.consume(b.out.n, &l)
	assert.Equal(t, bufSize, budget.mem, "written buffers are released")
	assert.False(t, a.backedUp())
	a.out.abandon()
	assert.Zero(t, budget.mem)
	assert.Zero(t, a.out.mem)
	assert.Same(t, budget, a.out.budget)

	shared := make([]byte, 100, 200)
	c.out.pushShared(shared)
	assert.Zero(t, c.out.mem, "a shared buffer is not this queue's memory")
}

func TestPushKeepsTailRoom(t *testing.T) {
	// Ensure what is written after a handed-over pooled buffer goes into
	// its spare room: a small response costs one buffer, not two.
	var l loop
	var q outq
	body := append(l.getBuf(), make([]byte, 12_500)...)
	q.push(body)
	q.write([]byte("HTTP/1.1 200 OK\r\n\r\n"), &l)
	assert.Len(t, q.segs, 1)
	assert.Equal(t, bufSize, q.mem)
	q.write(make([]byte, bufSize), &l) // more than the room left
	assert.Len(t, q.segs, 2)
	assert.Equal(t, 12_500+19+bufSize, q.n)
}

func TestHeldCountsWhatTheQueueKeeps(t *testing.T) {
	// Ensure held counts a queue's pooled buffers whole, each other
	// segment at its capacity (a shared event in full), and its list of
	// segments, and that it falls back as the output is written.
	var l loop
	var q outq
	q.write(make([]byte, 100), &l)
	assert.Equal(t, bufSize+cap(q.segs)*segSize, q.held(), "one pooled buffer for 100 bytes")
	assert.Equal(t, bufSize-100, q.tailRoom())

	shared := make([]byte, 900, 1024)
	q.pushShared(shared)
	q.pushShared(shared) // the same event twice: this queue keeps it either way
	assert.Zero(t, q.tailRoom(), "a shared event closes the tail")
	q.write(make([]byte, 10), &l)
	assert.Equal(t, 2*bufSize+2*1024+cap(q.segs)*segSize, q.held())
	assert.Equal(t, 100+2*900+10, q.n)

	q.consume(100+900, &l)
	assert.Equal(t, bufSize+1024+cap(q.segs)*segSize, q.held(), "written segments are released")
	q.consume(q.n, &l)
	assert.Equal(t, cap(q.segs)*segSize, q.held())
	assert.Zero(t, q.ext)

	q.pushShared(make([]byte, 10, bufSize)) // split so it is not taken for a pooled buffer
	assert.Equal(t, bufSize, q.ext)
	assert.Zero(t, q.mem)
	q.reset(&l)
	assert.Zero(t, q.held()-cap(q.segs)*segSize)
}
