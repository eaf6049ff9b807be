package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchEvent is a live stream's event as the game sends it: a standings
// change, with its id.
const benchEvent = "event: player\nid: 1234567\ndata: {\"id\":42,\"name\":\"bot00042\",\"faction\":\"FBI\",\"secrets\":1234}\n\n"

// BenchmarkStreamEvent is the load generator's cost of one event on an
// open event stream, as RunUsers's streams read them (path=stream): the
// server writes an event as one chunk, the stream wakes, reads, decodes
// and dispatches it (counted, its delivery looked up by key and recorded,
// as the players' events are), and the server writes the next only then,
// so each event is an arrival of its own, as a live server's are. Its
// baseline, in the same run (path=request): a response of the same size
// on the raw request path (BenchmarkRequest's cycle). The ratio is the
// figure; both must not allocate.
func BenchmarkStreamEvent(b *testing.B) {
	b.Run("path=stream", benchStreamEvent)
	b.Run("path=request", func(b *testing.B) {
		t, err := prepare(Config{URL: cannedServer(b, len(benchEvent)), KeepAlive: true})
		require.NoError(b, err)
		w := newWorker(newRun(t, 1<<62))
		defer w.closeConn()
		benchRequests(b, w)
	})
}

func benchStreamEvent(b *testing.B) {
	chunk := []byte(fmt.Sprintf("%x\r\n%s\r\n", len(benchEvent), benchEvent))
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
	br := bufio.NewReaderSize(conn, streamBuffer)
	_, err = http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(b, err)
	r := &usersRun{ctx: b.Context(), causes: newCauseMap(time.Minute)}
	r.delivery = newStepStats(DeliveryStep, false)
	key := []byte("bot00042|1234")
	r.causes.put(string(key), time.Now())
	n, done := 0, make(chan struct{})
	s := &Stream{run: r, conn: conn, done: done, stop: func() bool { return true }, opt: StreamOptions{
		Key: func(ev *Event) []byte { return key },
		OnEvent: func(*Event) {
			if n++; n < b.N {
				next <- struct{}{}
			} else {
				conn.Close()
			}
		}}}
	r.streams.Add(1)
	pending, _ := br.Peek(br.Buffered())
	b.ReportAllocs()
	b.ResetTimer()
	next <- struct{}{}
	s.read(conn, true, bytes.Clone(pending))
	b.StopTimer()
	close(next)
	require.Equal(b, b.N, n)
	require.EqualValues(b, b.N, r.delivery.result(0).Count, "each event's delivery recorded")
}
