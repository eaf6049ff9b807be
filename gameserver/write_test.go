package gameserver_test

import (
	"bufio"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigSize is the size of the large responses in these tests: 10 MiB, far
// more than the kernel buffers of a loopback connection hold.
const bigSize = 10 << 20

// bigMux serves pattern(bigSize) at /big, pattern(n) at /n/<n>, and "ok"
// elsewhere; bigCalled is closed after the first /big handler call.
func bigMux(bigCalled chan struct{}) http.Handler {
	var once sync.Once
	big := pattern(bigSize)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/big":
			once.Do(func() { close(bigCalled) })
			w.Header().Set("Content-Length", strconv.Itoa(bigSize))
			w.Write(big)
		case strings.HasPrefix(r.URL.Path, "/n/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
			w.Header().Set("Content-Length", strconv.Itoa(n))
			w.Write(big[:n])
		default:
			io.WriteString(w, "ok")
		}
	})
}

// Receive buffer sizes for dialWindow: tiny for a client that does not
// read, so the kernel holds little of what the server sends; small for a
// slow reader that must still get 10 MiB in a few seconds.
const (
	tinyWindow  = 16 << 10
	smallWindow = 256 << 10
)

// dialWindow connects with a receive buffer of rcvbuf bytes instead of
// the kernel's autotuned one (up to tcp_rmem's maximum, often more than
// the 10 MiB responses here).
func dialWindow(t testing.TB, addr string, rcvbuf int) *client {
	t.Helper()
	d := net.Dialer{Timeout: ioTimeout, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	cl := &client{t: t, c: c.(*net.TCPConn)}
	cl.br = bufio.NewReader(c)
	return cl
}

// getOK makes one request on a fresh connection and requires 200 "ok".
// It is safe from any goroutine: it reports with assert, not require.
func getOK(t testing.TB, addr string) bool {
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if !assert.NoError(t, err) {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: test\r\n\r\n"); !assert.NoError(t, err) {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if !assert.NoError(t, err, "another client while a big response is pending") {
		return false
	}
	body, err := io.ReadAll(resp.Body)
	return assert.NoError(t, err) && assert.Equal(t, "ok", string(body))
}

// readSlowly reads the response to a GET from cl in 32 KiB pieces,
// sleeping pause after every 256 KiB, and calls midway (if not nil) once,
// after the first MiB. It returns the body's length and SHA-256.
func readSlowly(t testing.TB, cl *client, pause time.Duration, midway func()) (int, [sha256.Size]byte) {
	t.Helper()
	require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(4*ioTimeout)))
	resp, err := http.ReadResponse(cl.br, nil)
	require.NoError(t, err)
	h := sha256.New()
	piece := make([]byte, 32<<10)
	read := 0
	for {
		if read >= 1<<20 && midway != nil {
			midway()
			midway = nil
		}
		n, err := resp.Body.Read(piece)
		h.Write(piece[:n])
		read += n
		if err == io.EOF {
			return read, [sha256.Size]byte(h.Sum(nil))
		}
		require.NoError(t, err, "after %d bytes", read)
		if read%(256<<10) < n {
			time.Sleep(pause)
		}
	}
}

func TestSlowReader(t *testing.T) {
	t.Parallel()
	// Ensure a 10 MiB response to a client reading small pieces with pauses
	// arrives byte-identical, and other clients are served while it is
	// still being delivered: the test holds the slow reader mid-response
	// until twenty other requests have completed.
	addr, _ := startServer(t, gameserver.Config{Handler: bigMux(make(chan struct{}))})
	cl := dialWindow(t, addr, smallWindow)
	cl.writeAll("GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
	n, sum := readSlowly(t, cl, 20*time.Millisecond, func() {
		for range 20 {
			require.True(t, getOK(t, addr))
		}
	})
	assert.Equal(t, bigSize, n)
	assert.Equal(t, patternSum(bigSize), sum)
}

func TestClientNeverReads(t *testing.T) {
	t.Parallel()
	// Ensure a client that never reads its 10 MiB response does not stop
	// the server from serving others.
	bigCalled := make(chan struct{})
	addr, _ := startServer(t, gameserver.Config{Handler: bigMux(bigCalled)})
	stuck := dialWindow(t, addr, tinyWindow)
	stuck.writeAll("GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
	select {
	case <-bigCalled:
	case <-time.After(ioTimeout):
		t.Fatal("the /big handler was never called")
	}
	for range 20 {
		require.True(t, getOK(t, addr))
	}
}

func TestPipelineHighWaterMark(t *testing.T) {
	// Not parallel: it measures the process's heap.
	// Ensure that while a client sends many pipelined requests and reads
	// none of the responses, the server stops reading its requests once
	// the output queued for it is large, instead of calling the handler
	// for each and buffering every response (DESIGN.md: "resume reading
	// once below the high-water mark"). Then, once the client reads, every
	// response arrives, in order.
	const requests, size = 320, 128 << 10 // 40 MiB of responses in all
	addr, s := startServer(t, gameserver.Config{Handler: bigMux(make(chan struct{}))})
	cl := dialWindow(t, addr, tinyWindow)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	req := "GET /n/" + strconv.Itoa(size) + " HTTP/1.1\r\nHost: test\r\n\r\n"
	cl.writeAll(strings.Repeat(req, requests))

	// Wait until the server stops calling the handler: the count stays
	// put over several samples (bounded by ioTimeout).
	stable, last := 0, uint64(0)
	eventually(t, func() bool {
		n := s.Stats().Requests
		if n > 0 && n == last {
			stable++
		} else {
			stable = 0
		}
		last = n
		return stable >= 30 || n == requests
	}, "handler calls never settled")
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	served := s.Stats().Requests
	t.Logf("handler calls while the client did not read: %d of %d; heap grew %d KiB",
		served, requests, (int64(during.HeapAlloc)-int64(before.HeapAlloc))>>10)
	assert.Less(t, served, uint64(requests/4), "the server kept reading and answering")
	assert.Less(t, int64(during.HeapAlloc)-int64(before.HeapAlloc), int64(requests*size/4),
		"heap grew with the unread responses")

	require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(4*ioTimeout)))
	want := patternSum(size)
	for i := range requests {
		resp, err := http.ReadResponse(cl.br, nil)
		require.NoError(t, err, "response %d", i)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err, "response %d", i)
		require.Equal(t, want, sha256.Sum256(body), "response %d", i)
	}
}
