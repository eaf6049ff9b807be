package loadtest_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// page is the 2159-byte body of the nginx seed benchmark.
var page = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz\n", 60)[:2159]

// MustServe starts an httptest server running h and returns its URL.
func MustServe(tb testing.TB, h http.HandlerFunc) string { return testkit.MustServe(tb, h) }

// MustServeCounting starts an httptest server running h and returns its
// URL and a count of the connections it accepted.
func MustServeCounting(tb testing.TB, h http.HandlerFunc) (string, *atomic.Int64) {
	tb.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	tb.Cleanup(s.Close)
	return s.URL, &conns
}

// MustServeRaw (export_test.go) runs a handler per raw TCP connection.
var MustServeRaw = loadtest.MustServeRaw

// readRequest reads one request header section; false at EOF or error.
func readRequest(r *bufio.Reader) bool {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}

// writePage answers with page and its Content-Length: net/http sends no
// length for a body over 2 KiB it did not buffer whole, and then closes an
// HTTP/1.0 connection.
func writePage(w http.ResponseWriter) {
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	io.WriteString(w, page)
}

func mustRun(tb testing.TB, cfg loadtest.Config) *loadtest.Result {
	tb.Helper()
	res, err := loadtest.Run(context.Background(), cfg)
	require.NoError(tb, err)
	return res
}

func TestRunKeepAlive(t *testing.T) {
	var seen atomic.Pointer[http.Request]
	url, conns := MustServeCounting(t, func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r)
		writePage(w)
	})

	// Ensure -k sends ab's HTTP/1.0 keep-alive request and reuses connections.
	res := mustRun(t, loadtest.Config{URL: url + "/index.html?x=1", Requests: 200, Concurrency: 4, KeepAlive: true})
	assert.EqualValues(t, 200, res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
	assert.EqualValues(t, 200, res.KeepAliveRequests)
	assert.EqualValues(t, 2159, res.DocumentLength)
	assert.EqualValues(t, 200*2159, res.HTMLTransferred)
	assert.Greater(t, res.TotalTransferred, res.HTMLTransferred)
	assert.Equal(t, "/index.html?x=1", res.DocumentPath)
	assert.LessOrEqual(t, conns.Load(), int64(4))
	assert.Zero(t, res.Connect.Median, "a reused connection has no connect time")
	assert.Len(t, res.Percentiles, 11)
	assert.Positive(t, res.TimeTaken)

	r := seen.Load()
	assert.Equal(t, "HTTP/1.0", r.Proto)
	assert.Equal(t, "Keep-Alive", r.Header.Get("Connection"))
	assert.Equal(t, "*/*", r.Header.Get("Accept"))
	assert.Empty(t, r.Header.Get("Accept-Encoding"))
	assert.Contains(t, r.Header.Get("User-Agent"), "ApacheBench/2.3")
}

func TestRunNewConnectionEach(t *testing.T) {
	url, conns := MustServeCounting(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })

	// Ensure without -k every request opens its own connection and ends when
	// the server closes it.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 50, Concurrency: 3})
	assert.EqualValues(t, 50, res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
	assert.EqualValues(t, 50, conns.Load())
	assert.Zero(t, res.KeepAliveRequests)
	assert.EqualValues(t, 50*2159, res.HTMLTransferred)
}

func TestRunLengthFailures(t *testing.T) {
	var n atomic.Int64
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		for readRequest(r) {
			body := "short"
			if n.Add(1)%2 == 0 {
				body = "longer"
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		}
	})
	// Ensure a body length differing from the first response's is a Length
	// failure (one worker: responses alternate 5, 6, 5, 6 bytes).
	cfg := loadtest.Config{URL: url, Requests: 10, KeepAlive: true}
	res := mustRun(t, cfg)
	assert.EqualValues(t, 10, res.CompleteRequests)
	assert.EqualValues(t, 5, res.FailedRequests)
	assert.Equal(t, loadtest.Failures{Length: 5}, res.Failures)
	assert.EqualValues(t, 5, res.DocumentLength)

	// Ensure -l accepts them.
	cfg.VariableLength = true
	res = mustRun(t, cfg)
	assert.Zero(t, res.FailedRequests)
}

func TestRunReceiveFailures(t *testing.T) {
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		if readRequest(r) {
			c.(*net.TCPConn).SetLinger(0) // close with RST
		}
	})
	// Ensure a reset without -r aborts as ab: "apr_socket_recv: Connection
	// reset by peer (104)".
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 20, Concurrency: 2})
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_socket_recv: Connection reset by peer (104)", abort.Message())
	require.NotNil(t, res)
	assert.Positive(t, res.Failures.Receive)

	// Ensure -r counts each as a Receive failure and goes on.
	res = mustRun(t, loadtest.Config{URL: url, Requests: 20, Concurrency: 2, ContinueOnReceiveError: true})
	assert.EqualValues(t, 20, res.CompleteRequests)
	assert.Equal(t, loadtest.Failures{Receive: 20}, res.Failures)
	assert.EqualValues(t, 20, res.FailedRequests)
}

func TestRunEOFBeforeEnd(t *testing.T) {
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		if readRequest(r) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ntruncated")
		}
	})
	// Ensure a response cut short by EOF is a Receive failure, not complete.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 5, ContinueOnReceiveError: true})
	assert.Equal(t, loadtest.Failures{Receive: 5}, res.Failures)
	_, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 5})
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_socket_recv: End of file found (70014)", abort.Message())
}

func TestRunConnectFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	// Ensure a refused connection counts as Connect and, past ten, aborts as
	// ab: "apr_socket_connect(): Connection refused (111)".
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: "http://" + addr + "/", Requests: 100, Concurrency: 1})
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_socket_connect(): Connection refused (111)", abort.Message())
	assert.EqualValues(t, 11, res.Failures.Connect)
	assert.EqualValues(t, 11, res.FailedRequests)
	assert.Zero(t, res.CompleteRequests)
}

func TestRunNon2xx(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	// Ensure non-2xx responses are counted apart and are not failures, as ab.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 30, Concurrency: 3, KeepAlive: true})
	assert.EqualValues(t, 30, res.CompleteRequests)
	assert.EqualValues(t, 30, res.Non2xx)
	assert.Zero(t, res.FailedRequests)
}

func TestRunServerClosesIdle(t *testing.T) {
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		for i := 0; i < 3 && readRequest(r); i++ {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	// Ensure a keep-alive connection the server closes between requests
	// (without saying so) is reopened and the request retried, not failed.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 20, Concurrency: 2, KeepAlive: true})
	assert.EqualValues(t, 20, res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
}

func TestRunCloseDelimited(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: an HTTP/1.0 response runs to close
		io.WriteString(w, page)
	})
	// Ensure with -k a close-delimited body completes at EOF and is not kept alive.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 10, Concurrency: 2, KeepAlive: true})
	assert.EqualValues(t, 10, res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
	assert.Zero(t, res.KeepAliveRequests)
	assert.EqualValues(t, 2159, res.DocumentLength)
}

func TestRunPost(t *testing.T) {
	var got atomic.Value
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.Header.Get("Content-Type") + " " + string(b))
	})
	// Ensure -p/-T send the body with its type, and Total body sent counts
	// whole requests as ab's.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 4, Body: []byte("a=1&b=2"), ContentType: "application/x-www-form-urlencoded"})
	assert.Equal(t, "POST application/x-www-form-urlencoded a=1&b=2", got.Load())
	assert.Zero(t, res.FailedRequests)
	assert.Greater(t, res.TotalBodySent, int64(4*len("a=1&b=2")))
	assert.Zero(t, res.TotalBodySent%4)
}

func TestRunHead(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	// Ensure -m HEAD reads no body although Content-Length is sent.
	res := mustRun(t, loadtest.Config{URL: url, Requests: 6, Concurrency: 2, KeepAlive: true, Method: "HEAD"})
	assert.EqualValues(t, 6, res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
	assert.Zero(t, res.HTMLTransferred)
}

func TestRunTimeLimitAndWarmup(t *testing.T) {
	var served atomic.Int64
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(time.Millisecond)
		writePage(w)
	})
	// Ensure -t ends the run near its limit and the warm-up is not counted.
	res := mustRun(t, loadtest.Config{URL: url, Concurrency: 2, KeepAlive: true,
		TimeLimit: 300 * time.Millisecond, Warmup: 100 * time.Millisecond})
	assert.Positive(t, res.CompleteRequests)
	assert.Greater(t, served.Load(), res.CompleteRequests)
	assert.Zero(t, res.FailedRequests)
	assert.InDelta(t, 0.3, res.TimeTaken.Seconds(), 0.25)
}

func TestRunTimeout(t *testing.T) {
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		readRequest(r)
		io.Copy(io.Discard, r) // never answer
	})
	// Ensure a silent server times out as ab's -s: an abort, or Receive
	// failures with -r.
	cfg := loadtest.Config{URL: url, Requests: 2, Timeout: 250 * time.Millisecond}
	_, err := loadtest.Run(context.Background(), cfg)
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_pollset_poll: The timeout specified has expired (70007)", abort.Message())
	cfg.ContinueOnReceiveError = true
	res := mustRun(t, cfg)
	assert.EqualValues(t, 2, res.Failures.Receive)
	assert.Zero(t, res.Failures.Length+res.Failures.Exceptions) // a connect may time out too on a loaded machine
}

func TestRunBadConfig(t *testing.T) {
	// Ensure a bad URL is an error naming it.
	for _, u := range []string{"", "ftp://x/", "http:///nohost", "http://127.0.0.1:99999/"} {
		_, err := loadtest.Run(context.Background(), loadtest.Config{URL: u})
		require.Error(t, err, u)
	}
}

func TestRunNetConnPath(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	// Ensure the portable net.Conn path counts as the raw-socket path does.
	for _, keepAlive := range []bool{false, true} {
		res := mustRun(t, loadtest.WithoutRawIO(loadtest.Config{URL: url, Requests: 40, Concurrency: 4, KeepAlive: keepAlive}))
		assert.EqualValues(t, 40, res.CompleteRequests)
		assert.Zero(t, res.FailedRequests)
		assert.EqualValues(t, 40*2159, res.HTMLTransferred)
	}
}

func TestRunLargeBody(t *testing.T) {
	var got atomic.Int64
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
	})
	// Ensure a request body larger than the socket buffer is written whole
	// (the raw path hands the rest to net.Conn).
	body := []byte(strings.Repeat("b", 8<<20))
	res := mustRun(t, loadtest.Config{URL: url, Requests: 2, KeepAlive: true, Body: body})
	assert.Zero(t, res.FailedRequests)
	assert.EqualValues(t, len(body), got.Load())
}

func TestRunProgress(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	// Ensure progress is reported at each tenth of the run, as ab's
	// "Completed N requests".
	var mu sync.Mutex
	var got []int64
	mustRun(t, loadtest.Config{URL: url, Requests: 100, Concurrency: 2, KeepAlive: true, Progress: func(n int64) {
		mu.Lock()
		got = append(got, n)
		mu.Unlock()
	}})
	assert.Equal(t, []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, got)
}
