package gameserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deferrer is a handler that defers every request to /defer and hands
// the Deferred, with its request, to the test.
type deferrer struct {
	got chan deferred
}

type deferred struct {
	d *gameserver.Deferred
	r *http.Request
}

func newDeferrer() *deferrer { return &deferrer{got: make(chan deferred, 200)} }

func (h *deferrer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/defer" {
		io.WriteString(w, "fast "+r.URL.Path)
		return
	}
	d, ok := gameserver.Defer(w)
	if !ok {
		panic("Defer refused under gameserver")
	}
	h.got <- deferred{d, r}
}

// next returns the next deferred request, bounded by ioTimeout.
func (h *deferrer) next(t testing.TB) deferred {
	t.Helper()
	select {
	case d := <-h.got:
		return d
	case <-time.After(ioTimeout):
		t.Fatal("no request was deferred")
		return deferred{}
	}
}

func TestDeferFinishFromGoroutine(t *testing.T) {
	t.Parallel()
	// Ensure a deferred response is finished by Finish from another
	// goroutine, with the request body intact although other connections
	// were read meanwhile (the body is copied out of the shared read
	// buffer), that other connections are served while it waits, and that
	// a request pipelined behind it waits and is answered after it, in
	// order.
	h := newDeferrer()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	a := dial(t, addr)
	body := strings.Repeat("A", 3000)
	a.writeAll("POST /defer HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n" + body +
		"GET /after HTTP/1.1\r\nHost: t\r\n\r\n")
	d := h.next(t)

	b := dial(t, addr)
	resp, got := b.get("/" + strings.Repeat("B", 5000)) // overwrites the read buffer
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "fast /"+strings.Repeat("B", 5000), got)
	assert.Equal(t, 1, s.Stats().Deferred)

	go func() {
		d.d.Finish(func(w http.ResponseWriter) {
			b, err := io.ReadAll(d.r.Body)
			if err != nil {
				panic(err)
			}
			fmt.Fprintf(w, "finished %d %t", len(b), string(b) == body)
		})
	}()
	resp, got = a.readResponse(http.MethodPost)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "finished 3000 true", got)
	resp, got = a.readResponse(http.MethodGet)
	assert.Equal(t, "fast /after", got)
	assert.Equal(t, 200, resp.StatusCode)
	eventually(t, func() bool { return s.Stats().Deferred == 0 }, "Stats.Deferred back to 0")
	assert.Error(t, d.r.Context().Err(), "the request's context ends with its response")
}

func TestDeferTimeout(t *testing.T) {
	t.Parallel()
	// Ensure a deferred response never finished is answered 503 after
	// DeferTimeout and logged, the connection then serves its next
	// request, and a late Finish does nothing.
	h := newDeferrer()
	var logs testkit.LogBuffer
	addr, _ := startServer(t, gameserver.Config{Handler: h, DeferTimeout: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cl := dial(t, addr)
	start := time.Now()
	cl.writeAll("GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
	d := h.next(t)
	resp, body := cl.readResponse(http.MethodGet)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "Service Unavailable", body)
	assert.Contains(t, logs.String(), "not finished within DeferTimeout")
	assert.Contains(t, logs.String(), "path=/defer")

	ran := make(chan struct{})
	d.d.Finish(func(w http.ResponseWriter) { close(ran) })
	resp, body = cl.get("/next")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "fast /next", body)
	select {
	case <-ran:
		t.Fatal("a Finish after the 503 ran")
	default:
	}
}

func TestDeferClientCloses(t *testing.T) {
	// Not parallel: it measures the process's CPU time.
	// Ensure a client that closes its connection while its response is
	// deferred cancels the request's context, its connection is closed at
	// once, a late Finish does nothing, and 100 such clients waiting cost
	// the process no CPU (a hung-up descriptor left in a level-triggered
	// epoll set would be reported every turn: a busy loop).
	const n = 100
	h := newDeferrer()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	var ds []deferred
	for range n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, "GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		ds = append(ds, h.next(t))
		require.NoError(t, c.Close())
	}
	for _, d := range ds {
		select {
		case <-d.r.Context().Done():
		case <-time.After(ioTimeout):
			t.Fatal("the request's context was not canceled when its client closed")
		}
		assert.ErrorIs(t, d.r.Context().Err(), context.Canceled)
	}
	eventually(t, func() bool { st := s.Stats(); return st.OpenConns == 0 && st.Deferred == 0 },
		"closed clients' connections are still open: %+v", s.Stats())

	before, wall := testkit.CPUTime(), time.Now()
	time.Sleep(500 * time.Millisecond)
	used, elapsed := testkit.CPUTime()-before, time.Since(wall)
	t.Logf("CPU while %d hung-up deferred clients wait: %v in %v", n, used, elapsed)
	assert.Less(t, used, elapsed/4, "the process spins while deferred clients are gone")

	late := make(chan struct{}, n)
	for _, d := range ds {
		d.d.Finish(func(w http.ResponseWriter) { late <- struct{}{} })
	}
	cl := dial(t, addr)
	resp, _ := cl.get("/probe") // a turn after the posted Finishes
	assert.Equal(t, 200, resp.StatusCode)
	assert.Empty(t, late, "a Finish after the client closed ran")
}

func TestDeferShutdownWaits(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown waits for a deferred response: it is still
	// answered, with "Connection: close", and Shutdown returns nil after.
	h := newDeferrer()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	cl := dial(t, addr)
	cl.writeAll("GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
	d := h.next(t)
	shut := startShutdown(t, s, addr)
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a deferred response pending", err)
	case <-time.After(100 * time.Millisecond):
	}
	d.d.Finish(func(w http.ResponseWriter) { io.WriteString(w, "late but whole") })
	resp, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, "late but whole", body)
	assert.True(t, resp.Close, "Connection: close while shutting down")
	select {
	case err := <-shut:
		assert.NoError(t, err)
	case <-time.After(ioTimeout):
		t.Fatal("Shutdown did not return after the deferred response")
	}
}

func TestDeferFinishPanics(t *testing.T) {
	t.Parallel()
	// Ensure a panic in a Finish function is answered 500 and logged, and
	// the loop serves on.
	h := newDeferrer()
	var logs testkit.LogBuffer
	addr, _ := startServer(t, gameserver.Config{Handler: h, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cl := dial(t, addr)
	cl.writeAll("GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
	h.next(t).d.Finish(func(w http.ResponseWriter) {
		w.Header().Set("X-Half", "done")
		panic("finish exploded")
	})
	resp, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Equal(t, "Internal Server Error", body)
	assert.Empty(t, resp.Header.Get("X-Half"))
	assert.Contains(t, logs.String(), "finish exploded")

	resp, body = dial(t, addr).get("/alive")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "fast /alive", body)
}

// slowAnswer is a handler written for both servers: it defers under
// gameserver and answers inline elsewhere.
func slowAnswer(w http.ResponseWriter, r *http.Request) {
	answer := func(w http.ResponseWriter, v string) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "answer "+v)
	}
	work := func() string { return strings.ToUpper(r.URL.Query().Get("q")) }
	d, ok := gameserver.Defer(w)
	if !ok {
		answer(w, work())
		return
	}
	go func() {
		v := work()
		d.Finish(func(w http.ResponseWriter) { answer(w, v) })
	}()
}

func TestDeferFallback(t *testing.T) {
	t.Parallel()
	// Ensure the same handler gives the same answer under httptest (Defer
	// reports false there) and under gameserver (deferred).
	rec := httptest.NewRecorder()
	slowAnswer(rec, httptest.NewRequest("GET", "/?q=spy", nil))
	assert.Equal(t, 200, rec.Code)
	assert.Equal(t, "answer SPY", rec.Body.String())
	_, ok := gameserver.Defer(rec)
	assert.False(t, ok)

	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(slowAnswer)})
	resp, body := dial(t, addr).get("/?q=spy")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, rec.Body.String(), body)
	assert.Equal(t, rec.Header().Get("Content-Type"), resp.Header.Get("Content-Type"))
}

func TestDeferTwice(t *testing.T) {
	t.Parallel()
	// Ensure a second Defer of the same response reports false, a writer
	// kept after the handler returned stays cut off, and only the first
	// Finish runs.
	var kept http.ResponseWriter
	second := make(chan bool, 1)
	got := make(chan *gameserver.Deferred, 1)
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := gameserver.Defer(w)
		_, ok := gameserver.Defer(w)
		second <- ok
		kept = w
		got <- d
	})})
	cl := dial(t, addr)
	cl.writeAll("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	assert.False(t, <-second)
	d := <-got
	d.Finish(func(w http.ResponseWriter) {
		_, err := kept.Write([]byte("stale"))
		fmt.Fprintf(w, "first, stale writer: %v", err)
	})
	d.Finish(func(w http.ResponseWriter) { io.WriteString(w, "second") })
	_, body := cl.readResponse(http.MethodGet)
	assert.Equal(t, "first, stale writer: gameserver: ResponseWriter used after the handler returned", body)
}
