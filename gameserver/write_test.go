package gameserver_test

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/statesecrets/server/internal/testkit"
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

// requestBig sends GET /big to a bigMux server on a new connection with
// a receive window of rcvbuf bytes and waits until the handler ran.
func requestBig(t testing.TB, addr string, bigCalled chan struct{}, rcvbuf int) *client {
	t.Helper()
	cl := dialWindow(t, addr, rcvbuf)
	cl.writeAll("GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
	waitClosed(t, bigCalled, "the /big handler")
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
	requestBig(t, addr, bigCalled, tinyWindow)
	for range 20 {
		require.True(t, getOK(t, addr))
	}
}

func TestClientResetsMidResponse(t *testing.T) {
	t.Parallel()
	// Ensure a client that resets its connection while a 10 MiB response
	// is being written costs the server only that connection.
	bigCalled := make(chan struct{})
	addr, s := startServer(t, gameserver.Config{Handler: bigMux(bigCalled)})
	cl := requestBig(t, addr, bigCalled, tinyWindow)
	_, err := io.ReadFull(cl.br, make([]byte, 64<<10))
	require.NoError(t, err)
	require.NoError(t, cl.c.SetLinger(0))
	require.NoError(t, cl.c.Close())
	eventually(t, func() bool { return s.Stats().OpenConns == 0 }, "the reset connection is still open")
	require.True(t, getOK(t, addr))
}

func TestConcurrentClients(t *testing.T) {
	t.Parallel()
	// Ensure fifty clients at once, each making twenty requests on one
	// connection and five on new ones, are all answered correctly (and,
	// under -race, without a data race in the server).
	mux := http.NewServeMux()
	mux.Handle("/", pathHandler())
	mux.Handle("/ok", textHandler("ok"))
	addr, s := startServer(t, gameserver.Config{Handler: mux})
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Go(func() {
			c, err := net.DialTimeout("tcp", addr, ioTimeout)
			if !assert.NoError(t, err) {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(4 * ioTimeout))
			br := bufio.NewReader(c)
			for i := range 20 {
				path := fmt.Sprintf("/%d/%d", g, i)
				if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); !assert.NoError(t, err) {
					return
				}
				resp, err := http.ReadResponse(br, nil)
				if !assert.NoError(t, err) {
					return
				}
				body, err := io.ReadAll(resp.Body)
				if !assert.NoError(t, err) || !assert.Equal(t, "GET "+path, string(body)) {
					return
				}
			}
			for range 5 {
				if !getOK(t, addr) {
					return
				}
			}
		})
	}
	wg.Wait()
	// Stats may lag the loop by the turn in progress: the last response
	// can reach its client before the turn that served it is published.
	eventually(t, func() bool { return s.Stats().Requests == 50*25 }, "Stats().Requests never reached 50*25")
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

// flushHandler writes "hello ", flushes, and writes "world": a response
// whose length is unknown when its header is sent.
func flushHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello ")
		w.(http.Flusher).Flush()
		io.WriteString(w, "world")
	})
}

func TestFlushChunkedHTTP11(t *testing.T) {
	t.Parallel()
	// Ensure a flushed response to HTTP/1.1 is sent with chunked coding
	// (RFC 9112 section 7.1), each flush a chunk, and the connection
	// persists.
	addr, _ := startServer(t, gameserver.Config{Handler: flushHandler()})
	cl := dial(t, addr)
	for range 2 {
		cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		require.Equal(t, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: X\r\nServer: X\r\n"+
			"Transfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
			normalize(cl.readRaw(http.MethodGet)))
	}
}

func TestFlushCloseDelimitedHTTP10(t *testing.T) {
	t.Parallel()
	// Ensure a flushed response to HTTP/1.0, which has no chunked coding,
	// is delimited by closing the connection, even if the client asked for
	// keep-alive (RFC 9112 section 6.3, rule 8).
	addr, _ := startServer(t, gameserver.Config{Handler: flushHandler()})
	for _, req := range []string{
		"GET / HTTP/1.0\r\n\r\n",
		abRequest,
	} {
		cl := dial(t, addr)
		cl.writeAll(req)
		raw := cl.readUntilEOF()
		resp := parseHead(t, raw)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, resp.TransferEncoding, "Transfer-Encoding to HTTP/1.0")
		assert.Empty(t, resp.Header.Get("Content-Length"))
		assert.NotContains(t, strings.ToLower(resp.Header.Get("Connection")), "keep-alive")
		_, body, _ := strings.Cut(raw, "\r\n\r\n")
		assert.Equal(t, "hello world", body)
	}
}

func TestLargeUnknownLengthHTTP11(t *testing.T) {
	t.Parallel()
	// Ensure a body written in many pieces without a declared length
	// reaches an HTTP/1.1 client whole, on a connection that persists.
	const n = 1 << 20
	addr, _ := startServer(t, gameserver.Config{Handler: piecesHandler(n, 4000)})
	cl := dial(t, addr)
	for range 2 {
		resp, body := cl.get("/")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, patternSum(n), sha256.Sum256([]byte(body)))
	}
}

func TestHeadFlushed(t *testing.T) {
	t.Parallel()
	// Ensure HEAD to a handler that flushes gets the head GET would get
	// but no chunks and no last-chunk, so the next pipelined response
	// follows at once.
	addr, _ := startServer(t, gameserver.Config{Handler: flushHandler()})
	cl := dial(t, addr)
	cl.writeAll("HEAD / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n")
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: X\r\nServer: X\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n"
	// Transfer-Encoding in a response to HEAD is optional (RFC 9112
	// section 6.1 MAY; net/http omits it).
	assert.Contains(t, []string{head, strings.Replace(head, "Transfer-Encoding: chunked\r\n", "", 1)},
		normalize(cl.readRaw(http.MethodHead)))
	assert.Equal(t, head+"6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n", normalize(cl.readRaw(http.MethodGet)))
}

func TestNoBodyStatus(t *testing.T) {
	t.Parallel()
	// Ensure 204 and 304 from a handler go out without a body (what the
	// handler writes is dropped) and 204 without Content-Length (RFC 9110
	// sections 8.6, 15.3.5 and 15.4.5), so the next response follows.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
			io.WriteString(w, "dropped")
		case "/304":
			w.Header().Set("ETag", `"v"`)
			w.WriteHeader(http.StatusNotModified)
			io.WriteString(w, "dropped")
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok")
		}
	})})
	cl := dial(t, addr)
	cl.writeAll("GET /204 HTTP/1.1\r\nHost: test\r\n\r\nGET /304 HTTP/1.1\r\nHost: test\r\n\r\n" +
		"GET /ok HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 204 No Content\r\nDate: X\r\nServer: X\r\n\r\n", normalize(cl.readRaw(http.MethodGet)))
	assert.Equal(t, "HTTP/1.1 304 Not Modified\r\nDate: X\r\nEtag: \"v\"\r\nServer: X\r\n\r\n",
		normalize(cl.readRaw(http.MethodGet)))
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
}

func TestResetContent(t *testing.T) {
	t.Parallel()
	// Ensure a 205 goes out with no content but "Content-Length: 0" (RFC
	// 9110 section 15.3.6; unlike 204, a client frames it by its fields), a
	// Write fails with http.ErrBodyNotAllowed, and a handler's own
	// Content-Length, Transfer-Encoding or Flush changes nothing, for
	// HTTP/1.1 and for an HTTP/1.0 keep-alive client.
	writeErr := make(chan error, 2)
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/205" {
			w.Header().Set("Content-Length", "7")
			w.Header().Set("Transfer-Encoding", "chunked")
			w.WriteHeader(http.StatusResetContent)
			_, err := io.WriteString(w, "dropped")
			writeErr <- err
			w.(http.Flusher).Flush()
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})})
	const want = "HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\nDate: X\r\nServer: X\r\n\r\n"
	cl := dial(t, addr)
	cl.writeAll("GET /205 HTTP/1.1\r\nHost: test\r\n\r\nGET /ok HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, want, normalize(cl.readRaw(http.MethodGet)))
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
	assert.ErrorIs(t, <-writeErr, http.ErrBodyNotAllowed)

	old := dial(t, addr)
	old.writeAll("GET /205 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	assert.Equal(t, strings.Replace(want, "Content-Length: 0\r\n", "Connection: keep-alive\r\nContent-Length: 0\r\n", 1),
		normalize(old.readRaw(http.MethodGet)))
	assert.ErrorIs(t, <-writeErr, http.ErrBodyNotAllowed)
}

func TestSwitchingProtocolsRefused(t *testing.T) {
	t.Parallel()
	// Ensure a handler's WriteHeader(101), which the server cannot follow
	// through without http.Hijacker, becomes a logged 500 that closes the
	// connection: no 101, none of the handler's fields, nothing it writes.
	var logs testkit.LogBuffer
	writeErr := make(chan error, 1)
	addr, _ := startServer(t, gameserver.Config{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Upgrade", "websocket")
			w.Header().Set("Connection", "Upgrade")
			w.WriteHeader(http.StatusSwitchingProtocols)
			_, err := io.WriteString(w, "frames")
			writeErr <- err
		}),
	})
	cl := dial(t, addr)
	cl.writeAll("GET /ws HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n" +
		"GET /next HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 21\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\nDate: X\r\nServer: X\r\n\r\nInternal Server Error",
		normalize(cl.readUntilEOF()))
	assert.ErrorIs(t, <-writeErr, http.ErrContentLength)
	assert.Equal(t, 1, strings.Count(logs.String(), "101 Switching Protocols"), "log: %s", logs.String())
}

func TestHandlerConnectionClose(t *testing.T) {
	t.Parallel()
	// Ensure a handler's "Connection: close" ends the connection after its
	// response, as with net/http: the pipelined request is not served.
	var calls counter
	addr, _ := startServer(t, gameserver.Config{Handler: calls.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "bye")
	}))})
	cl := dial(t, addr)
	cl.writeAll("GET /1 HTTP/1.1\r\nHost: test\r\n\r\nGET /2 HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n"+
		"Date: X\r\nServer: X\r\n\r\nbye", normalize(cl.readUntilEOF()))
	assert.Equal(t, []string{"/1"}, calls.seen())
}

func TestDeclaredLengthMismatch(t *testing.T) {
	t.Parallel()
	// Ensure a handler that declares a Content-Length and writes another
	// amount never desynchronises the connection, as with net/http: a
	// Write past the declared length fails with http.ErrContentLength and
	// sends nothing, and a response short of it is followed by the
	// connection's close, not by the next response.
	writeErr := make(chan error, 1)
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "short")
		case "/long":
			w.Header().Set("Content-Length", "3")
			_, err := io.WriteString(w, "toolong")
			writeErr <- err
		default:
			io.WriteString(w, "next")
		}
	})})
	for path, body := range map[string]string{"/short": "short", "/long": ""} {
		cl := dial(t, addr)
		cl.writeAll("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\nGET /next HTTP/1.1\r\nHost: test\r\n\r\n")
		declared := map[string]string{"/short": "10", "/long": "3"}[path]
		want := strings.Replace(okText(body), "Content-Length: 0", "Content-Length: "+declared, 1)
		want = strings.Replace(want, "Content-Length: 5", "Content-Length: "+declared, 1)
		assert.Equal(t, want, normalize(cl.readUntilEOF()), path)
	}
	assert.ErrorIs(t, <-writeErr, http.ErrContentLength)
}

func TestHeaderNotCarriedOver(t *testing.T) {
	t.Parallel()
	// Ensure header fields a handler set for one response do not appear in
	// the next response on the connection.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			w.Header().Set("X-Once", "1")
			http.SetCookie(w, &http.Cookie{Name: "tid", Value: "secret"})
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET /set HTTP/1.1\r\nHost: test\r\n\r\nGET /plain HTTP/1.1\r\nHost: test\r\n\r\n")
	resp, _ := cl.readResponse(http.MethodGet)
	assert.Equal(t, "1", resp.Header.Get("X-Once"))
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
}

func TestEmptyBody(t *testing.T) {
	t.Parallel()
	// Ensure a handler that writes nothing gets Content-Length: 0 and no
	// Content-Type, as with net/http.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nDate: X\r\nServer: X\r\n\r\n",
		normalize(cl.readRaw(http.MethodGet)))
}

func TestEarlyHints(t *testing.T) {
	t.Parallel()
	// Ensure a handler's 103 goes out before the final response to
	// HTTP/1.1, with the header fields set so far, and is not sent to
	// HTTP/1.0 (RFC 9110 section 15.2: no 1xx to an HTTP/1.0 client).
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</s.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "final")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n", cl.readRaw(http.MethodGet))
	assert.Equal(t, okText("final"), normalize(cl.readRaw(http.MethodGet)))

	old := dial(t, addr)
	old.writeAll("GET / HTTP/1.0\r\n\r\n")
	raw := old.readUntilEOF()
	assert.NotContains(t, raw, " 103 ")
	assert.Equal(t, http.StatusOK, parseHead(t, raw).StatusCode)
}

func TestResponseSplitting(t *testing.T) {
	t.Parallel()
	// Ensure CR and LF in a header value set by a handler cannot start a
	// new field or response (as net/http: they become spaces), and a field
	// name that is not a token is dropped.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.URL.Query().Get("v"))
		w.Header()["Bad Name\r\nX-Evil"] = []string{"1"}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET /?v=a%0d%0aSet-Cookie:%20evil=1%0d%0a%0d%0aHTTP/1.1%20200 HTTP/1.1\r\nHost: test\r\n\r\n")
	raw := cl.readRaw(http.MethodGet)
	assert.NotContains(t, raw, "\nSet-Cookie")
	assert.NotContains(t, raw, "X-Evil")
	assert.NotContains(t, raw, "Bad Name")
	resp := parseHead(t, raw)
	assert.Empty(t, resp.Header.Values("Set-Cookie"))
	assert.True(t, strings.HasSuffix(raw, "\r\n\r\nok"), "got %q", raw)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, http.StatusOK, parseHead(t, cl.readRaw(http.MethodGet)).StatusCode)
}

func TestHeaderValueControls(t *testing.T) {
	t.Parallel()
	// Ensure NUL, DEL and the other control characters but HTAB in a
	// handler's header value go out as spaces (RFC 9110 section 5.5), and a
	// value is trimmed after that.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ctl", "a\x00b\x01c\x1fd\x7fe\tf\vg\x1bh")
		w.Header().Set("X-Lead", "\x00\x00lead\x00")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nDate: X\r\nServer: X\r\n"+
		"X-Ctl: a b c d e\tf g h\r\nX-Lead: lead\r\n\r\nok", normalize(cl.readRaw(http.MethodGet)))
}

func TestResponseWriterInterfaces(t *testing.T) {
	t.Parallel()
	// Ensure the ResponseWriter is an http.Flusher and not an
	// http.Hijacker, as documented, and http.ResponseController reports
	// what it cannot do with http.ErrNotSupported.
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, hijacker := w.(http.Hijacker)
		_, flusher := w.(http.Flusher)
		rc := http.NewResponseController(w)
		_, _, hijackErr := rc.Hijack()
		fmt.Fprintf(w, "hijacker=%v flusher=%v hijack=%v flush=%v", hijacker, flusher,
			errors.Is(hijackErr, http.ErrNotSupported), rc.Flush())
	})})
	cl := dial(t, addr)
	_, body := cl.get("/")
	assert.Equal(t, "hijacker=false flusher=true hijack=true flush=<nil>", body)
}

func TestHandlerChosenFraming(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Path {
		case "/te":
			w.Header().Set("Transfer-Encoding", "chunked")
			io.WriteString(w, "hello")
		case "/cl-flush":
			w.Header().Set("Content-Length", "11")
			io.WriteString(w, "hello ")
			w.(http.Flusher).Flush()
			io.WriteString(w, "world")
		case "/cl-only":
			w.Header().Set("Content-Length", "42")
		}
	})})
	const chunkedHead = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: X\r\nServer: X\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct{ name, req, method, want string }{
		// Ensure a handler's Transfer-Encoding: chunked is honoured for
		// HTTP/1.1 and never sent to HTTP/1.0 (RFC 9112 section 6.1).
		{"ChunkedAsked", "GET /te HTTP/1.1\r\nHost: test\r\n\r\n", http.MethodGet, chunkedHead + "5\r\nhello\r\n0\r\n\r\n"},
		{"ChunkedAskedHTTP10", "GET /te HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", http.MethodGet, ""},
		// Ensure a declared Content-Length wins over Flush: no chunking.
		{"LengthAndFlush", "GET /cl-flush HTTP/1.1\r\nHost: test\r\n\r\n", http.MethodGet, okText("hello world")},
		// Ensure HEAD keeps the Content-Length a handler declared.
		{"HeadDeclared", "HEAD /cl-only HTTP/1.1\r\nHost: test\r\n\r\n", http.MethodHead,
			"HTTP/1.1 200 OK\r\nContent-Length: 42\r\nContent-Type: text/plain\r\nDate: X\r\nServer: X\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := dial(t, addr)
			cl.writeAll(tc.req)
			raw := cl.readRaw(tc.method)
			if tc.want != "" {
				assert.Equal(t, tc.want, normalize(raw))
				return
			}
			resp := parseHead(t, raw)
			assert.Empty(t, resp.TransferEncoding, "Transfer-Encoding to HTTP/1.0")
			assert.True(t, strings.HasSuffix(raw, "\r\n\r\nhello"), "got %q", raw)
		})
	}
}

func TestHandlerOwnDateAndServer(t *testing.T) {
	t.Parallel()
	// Ensure a handler's own Date and Server fields replace the server's,
	// not join them (one of each).
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "mine")
		w.Header().Set("Date", "Wed, 01 May 2002 12:00:00 GMT")
		io.WriteString(w, "x")
	})})
	cl := dial(t, addr)
	resp, _ := cl.get("/")
	assert.Equal(t, []string{"mine"}, resp.Header.Values("Server"))
	assert.Equal(t, []string{"Wed, 01 May 2002 12:00:00 GMT"}, resp.Header.Values("Date"))
}

func TestStaleResponseWriter(t *testing.T) {
	t.Parallel()
	// Ensure a ResponseWriter kept after its handler returned cannot touch
	// a later response, though the server reuses response state: another
	// client's response is exactly what its own handler wrote, and the
	// stale Write fails.
	var stashed http.ResponseWriter
	staleErr := make(chan error, 1)
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stash":
			stashed = w
			io.WriteString(w, "stashed")
		case "/victim":
			stashed.Header().Set("X-Evil", "1")
			stashed.WriteHeader(http.StatusTeapot)
			_, err := io.WriteString(stashed, "X")
			stashed.(http.Flusher).Flush()
			staleErr <- err
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "victim")
		}
	})})
	attacker := dial(t, addr)
	_, body := attacker.get("/stash")
	require.Equal(t, "stashed", body)
	victim := dial(t, addr)
	victim.writeAll("GET /victim HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, okText("victim"), normalize(victim.readRaw(http.MethodGet)))
	assert.EqualError(t, <-staleErr, "gameserver: ResponseWriter used after the handler returned")
	// The attacker's own connection gets nothing either.
	attacker.writeAll("GET /victim HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, okText("victim"), normalize(attacker.readRaw(http.MethodGet)))
	assert.Error(t, <-staleErr)
}
