package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cannedServer answers every request on 127.0.0.1:0 with a fixed
// keep-alive response of bodySize bytes, as fast as a server can.
func cannedServer(tb testing.TB, bodySize int) string {
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nServer: canned\r\nContent-Length: %d\r\n\r\n%s",
		bodySize, strings.Repeat("x", bodySize)))
	return MustServeRaw(tb, func(c net.Conn, r *bufio.Reader) {
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) == 2 {
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}
	})
}

// BenchmarkRequest measures one worker's request cycle on a kept-alive
// connection: write, read, parse, time and record. It must not allocate.
func BenchmarkRequest(b *testing.B) {
	for _, size := range []int{0, 2159, 64 << 10} {
		b.Run(fmt.Sprintf("body=%d", size), func(b *testing.B) {
			t, err := prepare(Config{URL: cannedServer(b, size), KeepAlive: true})
			require.NoError(b, err)
			r := newRun(t, 1<<62)
			w := newWorker(r)
			defer w.closeConn()
			benchRequests(b, w)
			require.Equal(b, Failures{}, w.counts.failures)
		})
	}
}

// benchRequests times b.N of w's request cycles, the first request (the
// connect) outside the timing.
func benchRequests(b *testing.B, w *worker) {
	b.Helper()
	require.Equal(b, finished, w.attempt())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if w.attempt() != finished {
			b.Fatal("request failed")
		}
	}
	b.StopTimer()
}

// BenchmarkRequestLog sets the cost of -out's line per request beside
// the same request cycle without it (run both: the ratio is the figure,
// not the nanoseconds of a shared machine). The line is built in the
// worker's block without allocating.
func BenchmarkRequestLog(b *testing.B) {
	for _, logged := range []bool{false, true} {
		b.Run(fmt.Sprintf("log=%v", logged), func(b *testing.B) {
			t, err := prepare(Config{URL: cannedServer(b, 2159), KeepAlive: true})
			require.NoError(b, err)
			r := newRun(t, 1<<62)
			if logged {
				r.log = newRequestLog(io.Discard)
			}
			w := newWorker(r)
			defer w.closeConn()
			benchRequests(b, w)
			w.flushLog()
		})
	}
}
