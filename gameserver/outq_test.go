package gameserver

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutqShared(t *testing.T) {
	// Ensure a shared buffer (Broadcast) is sent whole between the bytes
	// around it, never appended to, and never pooled, even at exactly the
	// pooled buffers' capacity.
	c := testCore(t)
	for _, n := range []int{1, 100, bufSize - 1, bufSize, bufSize + 1} {
		shared := bytes.Repeat([]byte("s"), n)
		keep := bytes.Clone(shared)
		var q outq
		q.write([]byte("before"), c)
		q.pushShared(shared)
		q.write([]byte("after"), c)
		var got bytes.Buffer
		for q.n > 0 {
			iov := q.iovecs(nil, 1000)
			m := 0
			for _, b := range iov {
				got.Write(b)
				m += len(b)
			}
			q.consume(m, c)
		}
		assert.Equal(t, "before"+string(keep)+"after", got.String(), "n=%d", n)
		assert.Equal(t, keep, shared, "the shared buffer was changed (n=%d)", n)
		for _, b := range c.free {
			assert.NotSame(t, &shared[len(shared)-1], &b[:cap(b)][cap(b)-1], "a shared buffer was pooled (n=%d)", n)
		}
	}
}
