package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkStreamEvent measures one event's round on an open event stream,
// as RunUsers's streams read them: the server writes an event as one chunk,
// the stream wakes, reads, parses and dispatches it, and the server writes
// the next only then, so each event is an arrival of its own, as a live
// server's are. Beside BenchmarkRequest (a request's round on the raw
// path) it says whether reading a stream costs more than reading a
// response. (A stream reads until EAGAIN and then waits, two reads an
// arrival: skipping the second, as rawIO skips its first, would lose an
// arrival, since RawConn.Read forgets a readiness that came before it.)
func BenchmarkStreamEvent(b *testing.B) {
	event := "event: player\ndata: {\"name\":\"bot00042\",\"secrets\":1234}\n\n"
	chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", len(event), event))
	next := make(chan struct{}, 1)
	url := MustServeRaw(b, func(c net.Conn, r *bufio.Reader) {
		if _, err := r.ReadSlice('\n'); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		for range next {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	require.NoError(b, err)
	_, err = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(b, err)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, streamBuffer), &http.Request{Method: http.MethodGet})
	require.NoError(b, err)
	r := &usersRun{ctx: b.Context(), causes: newCauseMap(time.Second)}
	r.delivery = newStepStats(DeliveryStep, false)
	n, done := 0, make(chan struct{})
	s := &Stream{run: r, conn: conn, done: done, stop: func() bool { return true }, opt: StreamOptions{OnEvent: func(*Event) {
		if n++; n < b.N {
			next <- struct{}{}
		} else {
			conn.Close()
		}
	}}}
	r.streams.Add(1)
	b.ResetTimer()
	next <- struct{}{}
	s.read(resp.Body)
	b.StopTimer()
	close(next)
	require.Equal(b, b.N, n)
}
