package loadtest_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

func TestRunContextEnds(t *testing.T) {
	// Ensure a run whose context ends stops starting requests, lets those
	// in flight finish, and returns what it measured with the context's
	// error. The context ends when the 20th request arrives, not after a
	// time: a busy machine once completed none in 300 ms.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var arrived atomic.Int64
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == 20 {
			cancel() // this request and the other connection's are in flight
		}
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	start := time.Now()
	res, err := loadtest.Run(ctx, loadtest.Config{URL: url, Requests: 1_000_000, Concurrency: 2, KeepAlive: true})
	assert.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, res)
	assert.GreaterOrEqual(t, res.CompleteRequests, int64(19))
	assert.Less(t, res.CompleteRequests, int64(1_000_000))
	assert.Zero(t, res.FailedRequests, "the requests in flight finished")
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestRunBindAddrs(t *testing.T) {
	// Ensure each new connection binds the next of BindAddrs in turn.
	var mu sync.Mutex
	var from []string
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		from = append(from, host)
		mu.Unlock()
		io.WriteString(w, "ok")
	})
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	mustRun(t, loadtest.Config{URL: url, Requests: 4, BindAddrs: addrs})
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"}, from)
}

func TestRunVariableLength(t *testing.T) {
	// Ensure bodies of varying length are Length failures, as ab counts
	// them, unless VariableLength (-l) says they may vary.
	var mu sync.Mutex
	n := 0
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		body := make([]byte, n)
		mu.Unlock()
		w.Write(body)
	})
	res := mustRun(t, loadtest.Config{URL: url, Requests: 5, KeepAlive: true})
	assert.EqualValues(t, 4, res.Failures.Length, "every body after the first differs from it")
	res = mustRun(t, loadtest.Config{URL: url, Requests: 5, KeepAlive: true, VariableLength: true})
	assert.Zero(t, res.FailedRequests)
	assert.True(t, res.VariableLength)
	assert.Contains(t, loadtest.Text(t, res), "Document Length:        Variable")
}

func TestRunStatusCodes(t *testing.T) {
	// Ensure every status is counted, the 2xx ones too, and only the
	// others are non-2xx.
	var mu sync.Mutex
	i := 0
	codes := []int{200, 201, 404, 200, 503, 200}
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := codes[i%len(codes)]
		i++
		mu.Unlock()
		w.WriteHeader(code)
	})
	res := mustRun(t, loadtest.Config{URL: url, Requests: 12, KeepAlive: true})
	assert.Equal(t, map[int]int64{200: 6, 201: 2, 404: 2, 503: 2}, res.StatusCodes)
	assert.EqualValues(t, 4, res.Non2xx)
}

func TestRunOpenLoopUnsent(t *testing.T) {
	// Ensure an open loop whose one connection is stuck counts the
	// requests due meanwhile that never found it free as unsent.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(600 * time.Millisecond)
		io.WriteString(w, "slow")
	})
	res := mustRun(t, loadtest.Config{URL: url, Rate: 50, TimeLimit: 500 * time.Millisecond, Concurrency: 1, KeepAlive: true})
	require.NotNil(t, res.OpenLoop)
	assert.EqualValues(t, 1, res.CompleteRequests)
	assert.EqualValues(t, 24, res.OpenLoop.Unsent, "25 due in 500 ms at 50/s, one sent")
	assert.True(t, res.FellShort())
	assert.Contains(t, loadtest.Text(t, res), "Never sent:             24 requests")
}

func TestRunReceiveAbortCounts(t *testing.T) {
	// Ensure a receive error without ContinueOnReceiveError aborts as ab,
	// with the requests completed until then counted on the error.
	var mu sync.Mutex
	n := 0
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		for readRequest(r) {
			mu.Lock()
			n++
			cut := n > 5
			mu.Unlock()
			if cut {
				return // closes the connection without an answer
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	res, err := loadtest.Run(t.Context(), loadtest.Config{URL: url, Requests: 100, KeepAlive: true})
	var abort *loadtest.AbortError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, "apr_socket_recv", abort.Op)
	assert.EqualValues(t, 6, abort.Completed, "five answered, the sixth failed")
	assert.EqualValues(t, 6, res.CompleteRequests)
	assert.EqualValues(t, 1, res.Failures.Receive)
}

func TestRunMalformedResponsesAreExceptions(t *testing.T) {
	// Ensure a response that is not HTTP is an exception (ab's count of
	// what it cannot parse), its connection closed, and not a receive
	// error that would abort the run: every request completes, failed,
	// on the raw-socket path and on net.Conn's.
	var conns atomic.Int64
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		conns.Add(1)
		for readRequest(r) {
			io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n")
		}
	})
	for name, cfg := range map[string]loadtest.Config{"raw": {URL: url, Requests: 5, KeepAlive: true},
		"net.Conn": loadtest.WithoutRawIO(loadtest.Config{URL: url, Requests: 5, KeepAlive: true})} {
		conns.Store(0)
		res := mustRun(t, cfg)
		assert.EqualValues(t, 5, res.CompleteRequests, name)
		assert.EqualValues(t, 5, res.FailedRequests, name)
		assert.Equal(t, loadtest.Failures{Exceptions: 5}, res.Failures, name)
		assert.EqualValues(t, 5, conns.Load(), "%s: a connection a request, each closed after its malformed answer", name)
	}
}
