package gameserver

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLimit bounds every wait in these tests: an upper bound for a hung
// server, never a speed requirement.
const waitLimit = 10 * time.Second

// startLoop serves cfg on 127.0.0.1:0 and returns the server, its address
// and a channel that receives Serve's result. Cleanup closes the server.
func startLoop(t *testing.T, cfg Config) (*Server, string, <-chan error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Handler == nil {
		cfg.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok "+r.URL.Path) })
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New(cfg)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	return s, l.Addr().String(), served
}

// dialLoop connects to addr with a deadline on every read and write.
func dialLoop(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, waitLimit)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(waitLimit)))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// get sends one GET and returns the response with its body read.
func get(t *testing.T, c net.Conn, br *bufio.Reader, path string) (*http.Response, string) {
	t.Helper()
	_, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// awaitEOF asserts the server closes c.
func awaitEOF(t *testing.T, br *bufio.Reader) {
	t.Helper()
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF)
}

func TestTurnElapsed(t *testing.T) {
	// Ensure TurnElapsed counts the turn in progress from its start, the
	// work of the function asking included, and is 0 while the loop waits.
	s, _, _ := startLoop(t, Config{})
	got := make(chan [2]time.Duration, 1)
	require.NoError(t, s.Post(func() {
		before := s.TurnElapsed()
		for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
		}
		got <- [2]time.Duration{before, s.TurnElapsed()}
	}))
	e := <-got
	assert.GreaterOrEqual(t, e[1]-e[0], 2*time.Millisecond, "the turn's work so far")
	assert.Less(t, e[1], time.Second)
	assert.Eventually(t, func() bool { return s.TurnElapsed() == 0 }, 5*time.Second, time.Millisecond, "the loop waits")
}

func TestPost(t *testing.T) {
	// Ensure functions posted from many goroutines all run, one at a time
	// on the loop (the race detector checks the unlocked slice), each
	// goroutine's in the order it posted them.
	t.Run("OK", func(t *testing.T) {
		s, _, _ := startLoop(t, Config{})
		const goroutines, posts = 8, 300
		var ran [goroutines][]int // touched only on the loop
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range posts {
					require.NoError(t, s.Post(func() { ran[g] = append(ran[g], i) }))
				}
			})
		}
		wg.Wait()
		done := make(chan struct{})
		require.NoError(t, s.Post(func() { close(done) }))
		waitFor(t, done)
		for g := range goroutines {
			require.Len(t, ran[g], posts, "goroutine %d", g)
			for i, v := range ran[g] {
				require.Equal(t, i, v, "goroutine %d ran out of order", g)
			}
		}
	})

	// Ensure a function posted before Serve runs once the loop starts.
	t.Run("BeforeServe", func(t *testing.T) {
		s := New(Config{Logger: slog.New(slog.DiscardHandler)})
		done := make(chan struct{})
		require.NoError(t, s.Post(func() { close(done) }))
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go s.Serve(l)
		t.Cleanup(func() { s.Close() })
		waitFor(t, done)
	})

	// Ensure Post fails with ErrServerClosed once the loop has stopped, and
	// the function never runs.
	t.Run("ErrServerClosed", func(t *testing.T) {
		s, _, served := startLoop(t, Config{})
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-served, ErrServerClosed)
		require.ErrorIs(t, s.Post(func() { t.Error("posted function ran after Close") }), ErrServerClosed)
	})

	// Ensure a panicking posted function is logged and the loop goes on.
	t.Run("Panic", func(t *testing.T) {
		var log testkit.LogBuffer
		s, addr, _ := startLoop(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		require.NoError(t, s.Post(func() { panic("posted boom") }))
		c, br := dialLoop(t, addr)
		resp, body := get(t, c, br, "/after")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "ok /after", body)
		assert.Contains(t, log.String(), "posted boom")
	})
}

func waitFor(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("timed out")
	}
}

func TestStats(t *testing.T) {
	// Ensure the counters count what crossed the wire, exactly.
	s, addr, _ := startLoop(t, Config{})
	c, br := dialLoop(t, addr)
	const reqs = 5
	req := "GET /s HTTP/1.1\r\nHost: t\r\n\r\n"
	written := 0
	for range reqs {
		_, err := io.WriteString(c, req)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, "ok /s", string(body))
		written += responseSize(t, resp, len(body))
	}
	c2, br2 := dialLoop(t, addr)
	get(t, c2, br2, "/s")
	wantWritten := uint64(written * (reqs + 1) / reqs)
	// The counters may lag the client by a loop turn (on the portable back
	// end, a write is counted when its helper goroutine reports back).
	require.Eventually(t, func() bool {
		st := s.Stats()
		return st.Requests == reqs+1 && st.BytesWritten >= wantWritten
	}, waitLimit, time.Millisecond)
	st := s.Stats()
	assert.Equal(t, 2, st.OpenConns)
	assert.Equal(t, uint64(2), st.AcceptedConns)
	assert.Equal(t, uint64(0), st.RejectedConns)
	assert.Equal(t, uint64((reqs+1)*len(req)), st.BytesRead)
	assert.Equal(t, wantWritten, st.BytesWritten)
	assert.NotZero(t, st.LoopTurns)
	assert.NotZero(t, st.LoopBusy)

	c.Close()
	c2.Close()
	require.Eventually(t, func() bool { return s.Stats().OpenConns == 0 }, waitLimit, time.Millisecond)
}

// responseSize is the wire size of resp: status line, header fields as
// sent (Go's reader keeps their order out of reach, so it sums them), blank
// line and body.
func responseSize(t *testing.T, resp *http.Response, body int) int {
	t.Helper()
	n := len("HTTP/1.1 ") + len(resp.Status) + 2 + 2 + body
	for k, vs := range resp.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n
}

func TestShutdown(t *testing.T) {
	// Ensure idle keep-alive connections are closed after
	// DrainIdleTimeout and Shutdown returns nil, and Serve ErrServerClosed.
	t.Run("Idle", func(t *testing.T) {
		s, addr, served := startLoop(t, Config{DrainIdleTimeout: 50 * time.Millisecond})
		c, br := dialLoop(t, addr)
		get(t, c, br, "/")
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
		awaitEOF(t, br)
		require.ErrorIs(t, <-served, ErrServerClosed)
	})

	// Ensure a request being read when Shutdown begins is still served,
	// with Connection: close, before Shutdown returns.
	t.Run("InFlight", func(t *testing.T) {
		s, addr, served := startLoop(t, Config{})
		c, br := dialLoop(t, addr)
		_, err := io.WriteString(c, "GET /late HTTP/1.1\r\nHost: t\r\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return s.Stats().BytesRead > 0 }, waitLimit, time.Millisecond)
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(context.Background()) }()
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned %v with a request in flight", err)
		case <-time.After(50 * time.Millisecond):
		}
		_, err = io.WriteString(c, "\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "ok /late", string(body))
		assert.True(t, resp.Close, "response to a request served during Shutdown must close")
		awaitEOF(t, br)
		require.NoError(t, <-shut)
		require.ErrorIs(t, <-served, ErrServerClosed)
	})

	// Ensure Shutdown returns ctx.Err() when its context ends first, having
	// closed what was left.
	t.Run("ContextEnds", func(t *testing.T) {
		s, addr, served := startLoop(t, Config{})
		c, br := dialLoop(t, addr)
		_, err := io.WriteString(c, "GET /never HTTP/1.1\r\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return s.Stats().BytesRead > 0 }, waitLimit, time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
		awaitEOF(t, br)
		require.ErrorIs(t, <-served, ErrServerClosed)
	})

	// Ensure Shutdown before Serve makes Serve return ErrServerClosed at
	// once and close the listener.
	t.Run("BeforeServe", func(t *testing.T) {
		s := New(Config{})
		require.NoError(t, s.Shutdown(context.Background()))
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		require.ErrorIs(t, s.Serve(l), ErrServerClosed)
		_, err = l.Accept()
		require.ErrorIs(t, err, net.ErrClosed)
	})

	// Ensure Shutdown stops timers: a pending one is stopped and never fires.
	t.Run("Timers", func(t *testing.T) {
		s, _, _ := startLoop(t, Config{})
		tm := s.AfterFunc(time.Hour, func() { t.Error("timer fired after Shutdown") })
		tick := s.Every(time.Hour, func() { t.Error("ticker fired after Shutdown") })
		require.NoError(t, s.Shutdown(context.Background()))
		assert.False(t, tm.Stop(), "Shutdown should have stopped the timer")
		assert.False(t, tick.Stop(), "Shutdown should have stopped the ticker")
		assert.False(t, s.AfterFunc(0, func() { t.Error("timer ran after Shutdown") }).Stop())
	})
}

func TestClose(t *testing.T) {
	// Ensure Close ends connections at once, even mid-request, and Serve
	// returns ErrServerClosed; a second Close is harmless.
	s, addr, served := startLoop(t, Config{})
	c, br := dialLoop(t, addr)
	_, err := io.WriteString(c, "GET /never HTTP/1.1\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.Stats().BytesRead > 0 }, waitLimit, time.Millisecond)
	require.NoError(t, s.Close())
	awaitEOF(t, br)
	require.ErrorIs(t, <-served, ErrServerClosed)
	require.NoError(t, s.Close())
}

func TestServeTwice(t *testing.T) {
	// Ensure a second Serve fails without disturbing the first.
	s, addr, _ := startLoop(t, Config{})
	require.Eventually(t, func() bool { return s.Addr() != nil }, waitLimit, time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.ErrorContains(t, s.Serve(l), "Serve called twice")
	c, br := dialLoop(t, addr)
	resp, _ := get(t, c, br, "/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, addr, s.Addr().String())
}

func TestPipelinedBackpressure(t *testing.T) {
	// Ensure pipelined requests whose responses pass the high-water mark
	// and the per-turn write budget are all answered, in order, whether
	// the client reads along or only after sending everything and
	// half-closing.
	const reqs, size = 40, 100 << 10
	body := strings.Repeat("z", size)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		io.WriteString(w, body)
	})
	for _, halfClose := range []bool{false, true} {
		_, addr, _ := startLoop(t, Config{Handler: h})
		c, br := dialLoop(t, addr)
		var all strings.Builder
		for i := range reqs {
			all.WriteString("GET /" + strings.Repeat("p", i%7) + " HTTP/1.1\r\nHost: t\r\n\r\n")
		}
		go func() {
			io.WriteString(c, all.String())
			if halfClose {
				c.(*net.TCPConn).CloseWrite()
			}
		}()
		for i := range reqs {
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err, "response %d", i)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, "/"+strings.Repeat("p", i%7), resp.Header.Get("X-Path"), "response %d out of order", i)
			require.Len(t, got, size)
		}
		if halfClose {
			awaitEOF(t, br)
		}
	}
}

func TestRequestContext(t *testing.T) {
	// Ensure a request carries the remote address and a context of its
	// own holding the local address, live while the handler runs and
	// canceled once the response ends (as net/http's), and that a
	// deferred request's context is canceled when the server stops.
	seen := make(chan *http.Request, 2)
	errs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs <- r.Context().Err()
		if r.URL.Path == "/defer" {
			Defer(w)
		}
		seen <- r
	})
	s, addr, served := startLoop(t, Config{Handler: h})
	c, br := dialLoop(t, addr)
	get(t, c, br, "/")
	r := <-seen
	ctx, remote := r.Context(), r.RemoteAddr
	assert.NoError(t, <-errs)
	assert.Equal(t, c.LocalAddr().String(), remote)
	assert.Equal(t, addr, ctx.Value(http.LocalAddrContextKey).(net.Addr).String())
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	<-ctx.Done()

	_, err := io.WriteString(c, "GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	ctx = (<-seen).Context()
	assert.NoError(t, <-errs)
	assert.NoError(t, ctx.Err(), "a deferred request's context lives on")
	require.NoError(t, s.Close())
	<-served
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
}

func TestUnixListener(t *testing.T) {
	// Ensure Serve works on a Unix socket, and Shutdown removes the socket
	// file as closing a net.UnixListener does.
	path := t.TempDir() + "/s.sock"
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	s := New(Config{Logger: slog.New(slog.DiscardHandler), DrainIdleTimeout: -1, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "unix "+r.URL.Path)
	})})
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	c, err := net.DialTimeout("unix", path, waitLimit)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(waitLimit)))
	_, body := get(t, c, bufio.NewReader(c), "/x")
	assert.Equal(t, "unix /x", body)
	require.NoError(t, s.Shutdown(context.Background()))
	require.ErrorIs(t, <-served, ErrServerClosed)
	_, err = os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestHTTP10KeepAliveNeedsLength(t *testing.T) {
	// Ensure an HTTP/1.0 keep-alive request keeps the connection only when
	// the response has a Content-Length, as net/http decides it: ab waits
	// for the close otherwise.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/empty" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		io.WriteString(w, "body")
	})
	_, addr, _ := startLoop(t, Config{Handler: h})
	c, br := dialLoop(t, addr)
	_, err := io.WriteString(c, "GET /full HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	io.ReadAll(resp.Body)
	assert.Equal(t, "keep-alive", resp.Header.Get("Connection"))
	assert.Equal(t, int64(4), resp.ContentLength)

	_, err = io.WriteString(c, "GET /empty HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	require.NoError(t, err)
	resp, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.True(t, resp.Close, "Connection: close")
	awaitEOF(t, br)
}

// A request with a large Content-Length body is buffered in one allocation
// sized from the header (the whole request plus one read), not grown by
// doubling as its bytes arrive; the buffer is not kept for what follows.
func TestLargeBodyBufferSizedOnce(t *testing.T) {
	const size = 4 << 20
	type seen struct{ n, capacity int }
	got := make(chan seen, 2)
	_, addr, _ := startLoop(t, Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if br, ok := r.Body.(*bodyReader); ok {
			// The body aliases the connection's input buffer, to its end.
			got <- seen{len(br.b), cap(br.b)}
		} else {
			got <- seen{}
		}
		io.WriteString(w, "ok")
	})})
	c, br := dialLoop(t, addr)
	body := strings.Repeat("x", size)
	go io.WriteString(c, "POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 4194304\r\n\r\n"+body+"GET /next HTTP/1.1\r\nHost: t\r\n\r\n")
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "ok", string(b))
	}
	big := <-got
	assert.Equal(t, size, big.n)
	// Sized once: the body's view of the buffer ends one read past it.
	// Grown by doubling, its capacity would be wherever the growth landed.
	assert.Equal(t, size+readBufSize, big.capacity, "the input buffer was not sized from the Content-Length")
}

func TestTurnBudget(t *testing.T) {
	// Ensure posted functions left once a turn has run for turnBudget go
	// on at the next turn, in order, the rest of that batch together.
	t.Run("Posted", func(t *testing.T) {
		s, _, _ := startLoop(t, Config{})
		var turns []uint64 // touched only on the loop
		done := make(chan struct{})
		note := func() { turns = append(turns, s.loop.turn) }
		require.NoError(t, s.Post(func() {
			// Posted from the loop: all three run in one batch at the next turn.
			s.Post(func() { note(); time.Sleep(2 * turnBudget) })
			s.Post(note)
			s.Post(func() { note(); close(done) })
		}))
		waitFor(t, done)
		require.Len(t, turns, 3)
		assert.Greater(t, turns[1], turns[0], "the function after a long one waited for the next turn")
		assert.Equal(t, turns[1], turns[2], "the rest of the batch")
	})
	// Ensure timers still due once a turn has run for turnBudget fire at
	// the next turn.
	t.Run("Timers", func(t *testing.T) {
		s, _, _ := startLoop(t, Config{})
		var turns [2]uint64
		done := make(chan struct{})
		require.NoError(t, s.Post(func() {
			s.AfterFunc(time.Millisecond, func() { turns[0] = s.loop.turn; time.Sleep(2 * turnBudget) })
			s.AfterFunc(time.Millisecond, func() { turns[1] = s.loop.turn; close(done) })
		}))
		waitFor(t, done)
		assert.Greater(t, turns[1], turns[0], "the timer after a long one waited for the next turn")
	})
}
