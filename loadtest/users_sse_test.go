package loadtest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkedEvents is n events in the chunked coding, several to a chunk
// and some split across chunks, as the server's runs of changes come,
// ended by the last chunk.
func chunkedEvents(n int) (body []byte, want []Event) {
	var plain bytes.Buffer
	for i := range n {
		fmt.Fprintf(&plain, "event: player\nid: %d\ndata: {\"name\":\"bot%05d\",\"secrets\":%d}\n\n", 100+i, i, i*7)
		if i%5 == 0 {
			plain.WriteString(":\n\n") // a heartbeat
		}
		want = append(want, Event{Name: "player", ID: fmt.Sprint(100 + i), Data: fmt.Appendf(nil, "{\"name\":\"bot%05d\",\"secrets\":%d}", i, i*7)})
	}
	rest := plain.Bytes()
	for size := 1; len(rest) > 0; size = size*3%97 + 1 {
		c := rest[:min(size, len(rest))]
		body = fmt.Appendf(body, "%x;ext=1\r\n%s\r\n", len(c), c)
		rest = rest[len(c):]
	}
	return append(body, "0\r\n\r\n"...), want
}

func TestStreamDecoderChunked(t *testing.T) {
	// Ensure the decoder gives every event of a chunked body whole and in
	// order, its id a string that stays as it was after later events,
	// however the reads cut the body (a byte at a time, at random, whole),
	// and ends at the last chunk.
	body, want := chunkedEvents(200)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"bytes", "random", "whole"} {
		t.Run(name, func(t *testing.T) {
			var got []Event
			d := newSSEDecoder(true, func(ev *Event) {
				got = append(got, Event{Name: ev.Name, ID: ev.ID, Data: bytes.Clone(ev.Data)})
			})
			var err error
			for rest := body; len(rest) > 0 && err == nil; {
				n := len(rest)
				switch name {
				case "bytes":
					n = 1
				case "random":
					n = min(1+rng.IntN(300), len(rest))
				}
				err, rest = d.feed(rest[:n]), rest[n:]
			}
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, want, got)
		})
	}
}

func TestStreamDecoderMalformed(t *testing.T) {
	// Ensure a chunked body whose framing is broken ends the stream with
	// an error, not a hang or a made-up event.
	for _, body := range []string{"zz\r\nx\r\n", "5\r\ndata:XY", "3\r\nabcXY"} {
		d := newSSEDecoder(true, func(*Event) { t.Errorf("an event out of %q", body) })
		assert.Error(t, d.feed([]byte(body)), body)
	}
}

func TestStreamReadsNoEventsAllocation(t *testing.T) {
	// Ensure decoding an event allocates nothing once the stream's
	// buffers have grown (ids come from the arena, a block a few dozen
	// events).
	body, _ := chunkedEvents(4000)
	body = body[:len(body)-5] // not the last chunk
	n := 0
	d := newSSEDecoder(true, func(*Event) { n++ })
	q := len(body) / 4
	require.NoError(t, d.feed(body[:q])) // the buffers grow
	pieces := [][]byte{body[q : 2*q], body[2*q : 3*q], body[3*q:]}
	allocs := testing.AllocsPerRun(2, func() { // one piece to warm up, two measured
		require.NoError(t, d.feed(pieces[0]))
		pieces = pieces[1:]
	})
	events := float64(n) * 2 / 4 // in each measured piece
	assert.Less(t, allocs, events/20, "allocations for %v events", events)
}

func TestStreamDecoderLineEnds(t *testing.T) {
	// Ensure a line ends at CRLF, LF or a CR alone, as the WHATWG parsing
	// rules have it (HTML section 9.2.5), a CRLF split between two reads
	// included, with a comment, a field without a colon and a long line
	// on the way, however the reads cut the body.
	long := bytes.Repeat([]byte("x"), 3*streamBuffer)
	body := "event: a\rid: 1\rdata: one\r\r" + // CR alone
		": a comment\r\nevent: b\r\nid: 2\r\ndata\r\ndata: two\r\n\r\n" + // CRLF, a field without colon
		"event: c\nid: 3\ndata: " + string(long) + "\n\n" + // LF, a long line
		"data: four\r\n\r" // CRLF then CR
	want := []Event{
		{Name: "a", ID: "1", Data: []byte("one")},
		{Name: "b", ID: "2", Data: []byte("\ntwo")},
		{Name: "c", ID: "3", Data: append([]byte(nil), long...)},
		{Name: "message", Data: []byte("four")},
	}
	for _, size := range []int{1, 2, 3, 7, len(body)} {
		var got []Event
		d := newSSEDecoder(false, func(ev *Event) {
			got = append(got, Event{Name: ev.Name, ID: ev.ID, Data: bytes.Clone(ev.Data)})
		})
		for rest := body; len(rest) > 0; {
			n := min(size, len(rest))
			require.NoError(t, d.feed([]byte(rest[:n])))
			rest = rest[n:]
		}
		assert.Equal(t, want, got, "reads of %d bytes", size)
	}
}
