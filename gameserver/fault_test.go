package gameserver_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicMux panics at /panic, flushes part of a response then panics at
// /panic-after-flush, and answers "ok" elsewhere.
func panicMux() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			w.Header().Set("X-Partial", "yes")
			io.WriteString(w, "partial body")
			panic("boom")
		case "/panic-after-flush":
			io.WriteString(w, "first part")
			w.(http.Flusher).Flush()
			panic("boom after flush")
		default:
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "ok")
		}
	})
}

func TestHandlerPanic(t *testing.T) {
	t.Parallel()
	// Ensure a handler panic gives that client a 500 (nothing the handler
	// wrote before it leaks out), the panic and its stack reach the
	// Logger, and the loop keeps serving other clients and this one.
	var logs testkit.LogBuffer
	addr, _ := startServer(t, gameserver.Config{
		Handler: panicMux(),
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
	})
	for range 3 {
		cl := dial(t, addr)
		cl.writeAll("GET /panic HTTP/1.1\r\nHost: test\r\n\r\n")
		resp, body := cl.readResponse(http.MethodGet)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("X-Partial"), "header from the panicking handler")
		assert.NotContains(t, body, "partial body")
		if !resp.Close { // a server may keep the connection: it must work
			cl.writeAll("GET /ok HTTP/1.1\r\nHost: test\r\n\r\n")
			assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
		}
		other := dial(t, addr)
		other.writeAll("GET /ok HTTP/1.1\r\nHost: test\r\n\r\n")
		assert.Equal(t, okText("ok"), normalize(other.readRaw(http.MethodGet)))
	}
	eventually(t, func() bool { return strings.Count(logs.String(), "boom") >= 3 }, "panics logged: %q", logs.String())
	assert.Contains(t, logs.String(), "fault_test.go", "the panic's stack is logged")
}

func TestPanicAfterFlush(t *testing.T) {
	t.Parallel()
	// Ensure a panic after the header went out closes the connection
	// without a 500 and without the chunked terminator, so the client can
	// tell the response is truncated (as net/http does).
	addr, _ := startServer(t, gameserver.Config{Handler: panicMux()})
	cl := dial(t, addr)
	cl.writeAll("GET /panic-after-flush HTTP/1.1\r\nHost: test\r\n\r\nGET /ok HTTP/1.1\r\nHost: test\r\n\r\n")
	raw := cl.readUntilEOF()
	assert.True(t, strings.HasPrefix(raw, "HTTP/1.1 200 OK\r\n"), "got %q", raw)
	assert.Equal(t, 1, strings.Count(raw, "HTTP/1.1 "), "a second response after the panic: %q", raw)
	assert.Contains(t, raw, "first part")
	assert.False(t, strings.HasSuffix(raw, "0\r\n\r\n"), "truncated response looks complete: %q", raw)
	require.True(t, getOK(t, addr))
}

func TestReadHeaderTimeout(t *testing.T) {
	t.Parallel()
	// Ensure a slowloris client, sending a header a byte at a time but
	// never finishing it, is disconnected without a response once
	// ReadHeaderTimeout has passed, though it keeps sending.
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok"), ReadHeaderTimeout: 200 * time.Millisecond})
	cl := dial(t, addr)
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		cl.c.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n"))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := cl.c.Write([]byte{"X-Slow: abcdefghij\r\n"[i%20]}); err != nil {
				return
			}
		}
	}()
	b, err := readToClose(cl.c, cl.c)
	close(stop)
	<-sent
	require.NoError(t, err, "the server kept the slow connection open")
	assert.Empty(t, string(b))
}

func TestReadHeaderTimeoutBody(t *testing.T) {
	t.Parallel()
	// Ensure ReadHeaderTimeout also bounds a body that never completes.
	addr, _ := startServer(t, gameserver.Config{Handler: echoHandler(), ReadHeaderTimeout: 200 * time.Millisecond})
	cl := dial(t, addr)
	cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nabc")
	assert.Empty(t, cl.readUntilEOF())
}

// answeredConn serves textHandler("ok") with the given timeouts and
// returns a keep-alive connection that has had one response.
func answeredConn(t testing.TB, readHeader, idle time.Duration) *client {
	t.Helper()
	addr, _ := startServer(t, gameserver.Config{
		Handler:           textHandler("ok"),
		ReadHeaderTimeout: readHeader,
		IdleTimeout:       idle,
	})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	require.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
	return cl
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	// Ensure a keep-alive connection that sends nothing after a response is
	// closed once IdleTimeout has passed, quietly; ReadHeaderTimeout is
	// long, so only the idle timer can close it.
	cl := answeredConn(t, time.Minute, 200*time.Millisecond)
	assert.Empty(t, cl.readUntilEOF())
}

func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	// Ensure a connection whose client never reads a large response is
	// closed once WriteTimeout passes with nothing taken, and the rest of
	// its output dropped.
	bigCalled := make(chan struct{})
	addr, s := startServer(t, gameserver.Config{Handler: bigMux(bigCalled), WriteTimeout: 200 * time.Millisecond})
	requestBig(t, addr, bigCalled, tinyWindow)
	eventually(t, func() bool { return s.Stats().OpenConns == 0 }, "the server never closed the stalled connection")
	assert.Less(t, s.Stats().BytesWritten, uint64(bigSize), "the whole response was written")
	require.True(t, getOK(t, addr))
}

func TestMaxConns(t *testing.T) {
	t.Parallel()
	// Ensure a connection over MaxConns, with no idle connection to close
	// in its place (each has a request partly sent), is closed at once
	// without a response (nothing read, nothing written), and the server
	// accepts again when one of the others closes.
	addr, s := startServer(t, gameserver.Config{Handler: textHandler("ok"), MaxConns: 2, MaxConnsPerAddr: -1})
	first, second := dial(t, addr), dial(t, addr)
	for _, cl := range []*client{first, second} {
		cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
		cl.writeAll("GET / HTTP/1.1\r\nHo")
	}
	over := dial(t, addr)
	over.c.Write([]byte("GET / HTTP/1.1\r\nHost: test\r\n\r\n")) // may fail: the server may have closed
	assert.Empty(t, over.readUntilEOF())
	eventually(t, func() bool { return s.Stats().RejectedConns == 1 }, "RejectedConns")
	assert.Equal(t, 2, s.Stats().OpenConns)

	require.NoError(t, first.c.Close())
	eventually(t, func() bool { return s.Stats().OpenConns == 1 }, "the closed connection is still counted")
	again := dial(t, addr)
	again.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, okText("ok"), normalize(again.readRaw(http.MethodGet)))
}

// openFDs counts the process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// endConn ends client connection c in one of seven ways, by number; an
// error means the server did not behave (closed too early, or never).
func endConn(c *net.TCPConn, way int) error {
	serverCloses := func(req string) error {
		if _, err := io.WriteString(c, req); err != nil {
			return err
		}
		_, err := readToClose(c, c)
		return err
	}
	switch way {
	case 0: // client closes after a keep-alive response
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			return err
		}
		_, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err
	case 1:
		return serverCloses("GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
	case 2: // bad request
		return serverCloses("GET / HTTP/1.1\r\nHost : test\r\n\r\n")
	case 3: // body over MaxBodyBytes
		return serverCloses("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
	case 4: // client gives up mid-request
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHo")
		return err
	case 5: // client connects and leaves
		return nil
	default: // client resets the connection after its request
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			return err
		}
		return c.SetLinger(0)
	}
}

func TestNoFDLeak(t *testing.T) {
	// Not parallel: it counts the whole process's descriptors.
	// Ensure that after 10,000 connections ended every way a client can end
	// one, the process has as many open descriptors as before.
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok"), MaxBodyBytes: 4})
	require.True(t, getOK(t, addr)) // the server is up and past any lazy set-up
	before := openFDs(t)
	for i := range 10_000 {
		c, err := net.DialTimeout("tcp", addr, ioTimeout)
		require.NoError(t, err, "round %d", i)
		require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
		require.NoError(t, endConn(c.(*net.TCPConn), i%7), "round %d, ending %d", i, i%7)
		c.Close()
	}
	var after int
	eventually(t, func() bool { after = openFDs(t); return after <= before },
		"open descriptors did not settle back to %d", before)
}

// idleAndBusy returns two connections to a bigMux server: one idle after
// a response, one whose /big response is being written to a receive
// window of rcvbuf bytes.
func idleAndBusy(t testing.TB, addr string, bigCalled chan struct{}, rcvbuf int) (idle, busy *client) {
	t.Helper()
	idle = dial(t, addr)
	idle.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	idle.readRaw(http.MethodGet)
	return idle, requestBig(t, addr, bigCalled, rcvbuf)
}

func TestShutdownGraceful(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown closes the listener, closes idle keep-alive
	// connections after DrainIdleTimeout, lets a response being written
	// finish, closes its connection once idle after it, and Post then
	// returns ErrServerClosed without running f.
	bigCalled := make(chan struct{})
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: bigMux(bigCalled), DrainIdleTimeout: 200 * time.Millisecond})

	idle, busy := idleAndBusy(t, addr, bigCalled, smallWindow)

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*ioTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	assert.Empty(t, idle.readUntilEOF(), "idle connection")
	require.NoError(t, busy.c.SetReadDeadline(time.Now().Add(4*ioTimeout)))
	resp, err := http.ReadResponse(busy.br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the response in progress was cut")
	assert.Len(t, body, bigSize)
	assert.Empty(t, busy.readUntilEOF(), "after the last response")

	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	assert.ErrorIs(t, s.Post(func() { t.Error("posted function ran after Shutdown") }), gameserver.ErrServerClosed)
	_, err = net.DialTimeout("tcp", addr, ioTimeout)
	assert.Error(t, err, "listener still open")
}

func TestTimeoutsSpareSlowProgress(t *testing.T) {
	t.Parallel()
	// Ensure a client that keeps taking its 10 MiB response, slowly, for
	// longer than WriteTimeout gets all of it: the timeout counts time
	// without progress. IdleTimeout, shorter still, must not apply while
	// the response is queued. (Once the server has handed the last bytes
	// to the kernel the idle timer may run and close the connection
	// gracefully while the client drains them: the data still arrives.)
	addr, _ := startServer(t, gameserver.Config{
		Handler:      bigMux(make(chan struct{})),
		WriteTimeout: 2 * time.Second,
		IdleTimeout:  200 * time.Millisecond,
	})
	cl := dialWindow(t, addr, smallWindow)
	cl.writeAll("GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
	// 4s of pauses in all, each a twentieth of WriteTimeout: margin for a
	// loaded machine that delays the reader.
	n, sum := readSlowly(t, cl, 100*time.Millisecond, nil)
	assert.Equal(t, bigSize, n)
	assert.Equal(t, patternSum(bigSize), sum)
}

func TestKeepAliveWaitIsIdleNotHeader(t *testing.T) {
	t.Parallel()
	// Ensure the wait for a keep-alive connection's next request is
	// governed by IdleTimeout, not ReadHeaderTimeout, which starts only
	// at the request's first byte.
	cl := answeredConn(t, 100*time.Millisecond, time.Minute)
	time.Sleep(time.Second) // ten header timeouts, well inside the idle one
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
}

func TestReadHeaderTimeoutFromConnect(t *testing.T) {
	t.Parallel()
	// Ensure a connection that never sends a byte is closed after
	// ReadHeaderTimeout ("or from connecting"), though IdleTimeout is long.
	addr, _ := startServer(t, gameserver.Config{
		Handler:           textHandler("ok"),
		ReadHeaderTimeout: 200 * time.Millisecond,
		IdleTimeout:       time.Minute,
	})
	assert.Empty(t, dial(t, addr).readUntilEOF())
}

// startShutdown runs s.Shutdown on another goroutine, bounded by
// 4*ioTimeout, and returns once the listener at addr refuses connections,
// so Shutdown has begun; the channel receives Shutdown's result.
func startShutdown(t testing.TB, s *gameserver.Server, addr string) <-chan error {
	t.Helper()
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*ioTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, "the listener is still open after Shutdown")
	return shut
}

func TestShutdownFinishesPartialRequest(t *testing.T) {
	t.Parallel()
	// Ensure a request half read when Shutdown begins is still read whole,
	// answered with Connection: close, and its connection then closed.
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: textHandler("ok")})

	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	cl.readRaw(http.MethodGet)
	cl.writeAll("GET / HTTP/1.1\r\nHo")
	eventually(t, func() bool { return s.Stats().BytesRead > 32 }, "the partial request was never read")
	shut := startShutdown(t, s, addr)
	cl.writeAll("st: test\r\n\r\n")
	assert.Equal(t, strings.Replace(okText("ok"), "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nConnection: close\r\n", 1),
		normalize(cl.readRaw(http.MethodGet)))
	assert.Empty(t, cl.readUntilEOF())
	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
}

// serveUnmanaged serves cfg on 127.0.0.1:0 without startServer's
// Shutdown at cleanup, for tests that stop the server themselves. served
// receives Serve's result.
func serveUnmanaged(t testing.TB, cfg gameserver.Config) (addr string, s *gameserver.Server, served chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.Logger = slog.New(slog.DiscardHandler)
	s = gameserver.New(cfg)
	served = make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	return l.Addr().String(), s, served
}

func TestShutdownDeadline(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown whose context ends first, with a client that never
	// reads its response, closes the connection, returns ctx.Err() and
	// stops the loop.
	bigCalled := make(chan struct{})
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: bigMux(bigCalled)})
	requestBig(t, addr, bigCalled, tinyWindow)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	assert.Zero(t, s.Stats().OpenConns)
}

func TestCloseAtOnce(t *testing.T) {
	t.Parallel()
	// Ensure Close closes the listener and every connection at once, idle
	// or with output pending, and Serve returns ErrServerClosed.
	bigCalled := make(chan struct{})
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: bigMux(bigCalled)})
	idle, _ := idleAndBusy(t, addr, bigCalled, tinyWindow)

	require.NoError(t, s.Close())
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	assert.Empty(t, idle.readUntilEOF())
	_, err := net.DialTimeout("tcp", addr, ioTimeout)
	assert.Error(t, err, "listener still open")
	assert.ErrorIs(t, s.Post(func() {}), gameserver.ErrServerClosed)
}

func TestShutdownBeforeServe(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown before Serve makes Serve return ErrServerClosed at
	// once (and close the listener it was given).
	s := gameserver.New(gameserver.Config{Handler: textHandler("ok"), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, s.Shutdown(context.Background()))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorIs(t, s.Serve(l), gameserver.ErrServerClosed)
	_, err = net.DialTimeout("tcp", l.Addr().String(), ioTimeout)
	assert.Error(t, err, "Serve did not close its listener")
}

func TestPostNeverBlocks(t *testing.T) {
	t.Parallel()
	// Ensure Post returns while the loop is busy in a handler (it never
	// waits for the loop), and the functions run once the handler returns,
	// in the order posted.
	inHandler, release := make(chan struct{}), make(chan struct{})
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inHandler)
		<-release
		io.WriteString(w, "ok")
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
	waitClosed(t, inHandler, "handler")

	var ran []int // appended on the loop only
	done := make(chan struct{})
	for i := range 1000 {
		require.NoError(t, s.Post(func() { ran = append(ran, i) }))
	}
	require.NoError(t, s.Post(func() { close(done) }))
	close(release) // every Post above returned while the handler ran
	waitClosed(t, done, "posted functions")
	require.Len(t, ran, 1000)
	for i, v := range ran {
		require.Equal(t, i, v, "out of order")
	}
	resp, _ := cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestShutdownPipelineTellsClient(t *testing.T) {
	t.Parallel()
	// Ensure that when Shutdown begins while pipelined requests wait
	// behind a response still being written, the response in progress
	// arrives whole, every later response is whole, the last one says
	// Connection: close, and exactly the requests answered were served, so
	// the client knows which to retry (RFC 9112 section 9.6).
	var calls counter
	bigCalled := make(chan struct{})
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: calls.wrap(bigMux(bigCalled))})
	cl := dialWindow(t, addr, smallWindow)
	cl.writeAll("GET /big HTTP/1.1\r\nHost: test\r\n\r\nGET /2 HTTP/1.1\r\nHost: test\r\n\r\nGET /3 HTTP/1.1\r\nHost: test\r\n\r\n")
	waitClosed(t, bigCalled, "the /big handler")
	shut := startShutdown(t, s, addr)

	require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(4*ioTimeout)))
	resp, err := http.ReadResponse(cl.br, nil)
	require.NoError(t, err)
	answered, closed := 1, resp.Close
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, patternSum(bigSize), sha256.Sum256(body))
	for !closed && answered < 3 {
		resp, body := cl.readResponse(http.MethodGet)
		require.Equal(t, "ok", body)
		answered, closed = answered+1, resp.Close
	}
	assert.True(t, closed, "no response said Connection: close")
	assert.Empty(t, cl.readUntilEOF())
	assert.Equal(t, []string{"/big", "/2", "/3"}[:answered], calls.seen(), "served but not answered, or answered twice")
	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
}
