package gameserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveOwned serves cfg on a listener made by gameserver.Listen (plain
// TCP, owned by the server), without startServer's Shutdown at cleanup.
func serveOwned(t testing.TB, cfg gameserver.Config) (addr string, s *gameserver.Server, served chan error) {
	t.Helper()
	l, err := gameserver.Listen("tcp", "127.0.0.1:0", gameserver.ListenOptions{})
	require.NoError(t, err)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s = gameserver.New(cfg)
	served = make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	return l.Addr().String(), s, served
}

// churnResult counts what clients that open a new connection per request
// saw around a Shutdown.
type churnResult struct {
	answered atomic.Int64 // a whole response
	closing  atomic.Int64 // of which said Connection: close
	refused  atomic.Int64 // the connection could not be made (refused, or its SYN unanswered)
	reset    atomic.Int64 // made, request sent, then reset or closed without a response
	errs     sync.Map     // error text -> count, for the failure message
}

// churn runs one client: a new connection per request until stop closes
// and the server no longer takes connections, or until deadline.
func churn(addr string, stop <-chan struct{}, deadline time.Time, r *churnResult) {
	stopped := false
	for time.Now().Before(deadline) {
		select {
		case <-stop:
			stopped = true
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err != nil {
			r.refused.Add(1)
			if stopped {
				return
			}
			continue
		}
		c.SetDeadline(deadline)
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(bufio.NewReader(c), nil)
		}
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		c.Close()
		if err != nil {
			r.reset.Add(1)
			n, _ := r.errs.LoadOrStore(err.Error(), new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			continue
		}
		r.answered.Add(1)
		if resp.Close {
			r.closing.Add(1)
		}
	}
}

func TestShutdownChurnNoReset(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stopping handshakes needs Linux's socket filter")
	}
	t.Parallel()
	// Ensure that 40 clients opening a new connection per request as fast
	// as they can while Shutdown runs (ab without -k) see no reset: each
	// request sent on a connection that was made is answered, and once the
	// server stops taking connections they are refused (or left to
	// retransmit their SYN), never accepted and then reset.
	for round := range 3 {
		r := shutdownUnderChurn(t)
		var errs []string
		r.errs.Range(func(k, v any) bool {
			errs = append(errs, fmt.Sprintf("%d× %v", v.(*atomic.Int64).Load(), k))
			return true
		})
		assert.Zero(t, r.reset.Load(), "round %d: connections reset after their request was sent: %v", round, errs)
		t.Logf("round %d: answered %d (%d with Connection: close), refused %d, reset %d",
			round, r.answered.Load(), r.closing.Load(), r.refused.Load(), r.reset.Load())
	}
}

// shutdownUnderChurn shuts a server down while 40 clients open a new
// connection per request, and returns what they saw.
func shutdownUnderChurn(t *testing.T) *churnResult {
	addr, s, served := serveOwned(t, gameserver.Config{Handler: textHandler("ok")})
	var r churnResult
	stop := make(chan struct{})
	deadline := time.Now().Add(4 * ioTimeout)
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() { churn(addr, stop, deadline, &r) })
	}
	eventually(t, func() bool { return r.answered.Load() > 400 }, "the clients were never served")
	ctx, cancel := context.WithTimeout(context.Background(), 4*ioTimeout)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	close(stop)
	wg.Wait()
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	return &r
}

func TestShutdownServesPipelinedInSocket(t *testing.T) {
	t.Parallel()
	// Ensure that requests pipelined behind a response the client is slow
	// to take, still unread in the server's socket when Shutdown begins,
	// are all served, in order, only the last with Connection: close, and
	// the connection then ends without a reset.
	const depth = 8
	var calls counter
	bigCalled := make(chan struct{})
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: calls.wrap(bigMux(bigCalled))})
	cl := requestBig(t, addr, bigCalled, smallWindow)
	var pipe strings.Builder
	for i := 2; i <= depth; i++ {
		fmt.Fprintf(&pipe, "GET /%d HTTP/1.1\r\nHost: test\r\n\r\n", i)
	}
	cl.writeAll(pipe.String())
	time.Sleep(50 * time.Millisecond) // they reach the server's socket, which it does not read: its output is backed up
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*ioTimeout)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond) // the drain has begun

	require.NoError(t, cl.c.SetReadDeadline(time.Now().Add(4*ioTimeout)))
	resp, err := http.ReadResponse(cl.br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Len(t, body, bigSize)
	assert.False(t, resp.Close, "/big said Connection: close with requests behind it")
	for i := 2; i <= depth; i++ {
		resp, body := cl.readResponse(http.MethodGet)
		require.Equal(t, "ok", body, "response %d", i)
		assert.Equal(t, i == depth, resp.Close, "Connection: close on response %d of %d", i, depth)
	}
	_, err = cl.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "a clean end, not a reset")
	want := []string{"/big"}
	for i := 2; i <= depth; i++ {
		want = append(want, fmt.Sprintf("/%d", i))
	}
	assert.Equal(t, want, calls.seen())
	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
}

func TestShutdownIdleConnNoRace(t *testing.T) {
	t.Parallel()
	// Ensure a request sent on an idle keep-alive connection at the moment
	// Shutdown begins (a proxy reusing its pooled upstream connection) is
	// answered with Connection: close, never reset, whichever comes first;
	// and Shutdown returns once the client closes, long before
	// DrainIdleTimeout.
	for i := range 20 {
		addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: echoHandler(), DrainIdleTimeout: time.Minute})
		cl := dial(t, addr)
		cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nfirst")
		_, body := cl.readResponse(http.MethodPost)
		require.Equal(t, "first", body)
		start := time.Now()
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(context.Background()) }()
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * time.Millisecond) // the drain has begun, or not yet
		}
		// Requests on the connection are answered, keep-alive while the
		// drain has not begun, until one says Connection: close.
		for n := 0; ; n++ {
			require.Less(t, n, 1000, "round %d: no response said Connection: close", i)
			cl.writeAll("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 6\r\n\r\nsecond")
			resp, body := cl.readResponse(http.MethodPost)
			require.Equal(t, "second", body, "round %d", i)
			if resp.Close {
				break
			}
		}
		_, err := cl.br.ReadByte()
		assert.ErrorIs(t, err, io.EOF, "round %d: a clean end", i)
		cl.c.Close()
		select {
		case err := <-shut:
			require.NoError(t, err)
		case <-time.After(ioTimeout):
			t.Fatalf("round %d: Shutdown did not return after the client closed", i)
		}
		assert.Less(t, time.Since(start), 30*time.Second, "round %d: Shutdown waited for DrainIdleTimeout", i)
		require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	}
}

func TestShutdownIdleConnGrace(t *testing.T) {
	t.Parallel()
	// Ensure an idle keep-alive connection stays open while the server
	// drains, answering a request that comes late with Connection: close,
	// and that one nobody uses is closed cleanly once DrainIdleTimeout has
	// passed. The late request is sent while the loop is held, after the
	// drain began and before the loop's next read, so no sleep decides
	// which comes first on a busy machine.
	const grace = 300 * time.Millisecond
	addr, s, served := serveUnmanaged(t, gameserver.Config{Handler: pathHandler(), DrainIdleTimeout: grace})
	used, unused := dial(t, addr), dial(t, addr)
	for _, cl := range []*client{used, unused} {
		_, body := cl.get("/first")
		require.Equal(t, "GET /first", body)
	}
	start := time.Now()
	drained, sent := holdLoopAfterDrain(t, s)
	<-drained
	used.writeAll("GET /late HTTP/1.1\r\nHost: test\r\n\r\n")
	close(sent)
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }() // waits for the drain's end
	resp, body := used.readResponse(http.MethodGet)
	assert.Equal(t, "GET /late", body)
	assert.True(t, resp.Close, "Connection: close during the drain")
	assert.Empty(t, used.readUntilEOF())

	assert.Empty(t, unused.readUntilEOF(), "the unused connection ends cleanly")
	assert.GreaterOrEqual(t, time.Since(start), grace*9/10, "closed before DrainIdleTimeout")
	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
}

// holdLoopAfterDrain begins s's drain from the loop and then holds the
// loop: drained is closed once the drain has begun, and the loop goes on
// (to read what the test sent meanwhile) once the test closes sent, or
// after ioTimeout.
func holdLoopAfterDrain(t *testing.T, s *gameserver.Server) (drained, sent chan struct{}) {
	t.Helper()
	drained, sent = make(chan struct{}), make(chan struct{})
	require.NoError(t, s.Post(func() {
		// On the loop Shutdown only posts the drain's start; the hold,
		// posted after it, runs after it.
		assert.ErrorIs(t, s.Shutdown(context.Background()), gameserver.ErrLoopGoroutine)
		assert.NoError(t, s.Post(func() {
			close(drained)
			select {
			case <-sent:
			case <-time.After(ioTimeout):
			}
		}))
	}))
	return drained, sent
}

func TestShutdownHandshakesUnderWay(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stopping handshakes needs Linux's socket filter")
	}
	t.Parallel()
	// Ensure connections that the client saw made before Shutdown began,
	// but whose request comes after (under TCP_DEFER_ACCEPT the kernel
	// holds them, unaccepted, until their first bytes), are accepted and
	// answered with Connection: close, not reset; and a client connecting
	// after the drain began is never accepted.
	addr, s, served := serveOwned(t, gameserver.Config{Handler: pathHandler()})
	first := dial(t, addr)
	_, body := first.get("/serving") // the listener is set up, TCP_DEFER_ACCEPT included
	require.Equal(t, "GET /serving", body)
	first.c.Close()
	var early []net.Conn
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, ioTimeout)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		early = append(early, c)
	}
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	time.Sleep(100 * time.Millisecond) // the drain has begun: new handshakes are dropped
	late, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		late.Close()
	}
	assert.Error(t, err, "a connection made after the drain began")
	for i, c := range early {
		require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
		_, err := fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		require.NoError(t, err)
	}
	for i, c := range early {
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "connection %d", i)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, fmt.Sprintf("GET /%d", i), string(body))
		assert.True(t, resp.Close, "connection %d: Connection: close", i)
		_, err = br.ReadByte()
		assert.ErrorIs(t, err, io.EOF, "connection %d ends cleanly", i)
		assert.False(t, errors.Is(err, syscall.ECONNRESET))
	}
	require.NoError(t, <-shut)
	require.ErrorIs(t, <-served, gameserver.ErrServerClosed)
	assert.Equal(t, uint64(1+16), s.Stats().AcceptedConns)
}
