package gameserver_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hub is a set of event streams, as a game keeps its subscribers. Under
// gameserver it is touched only on the loop; the lock is for the net/http
// fallback, where handlers run on goroutines of their own.
type hub struct {
	mu      sync.Mutex
	streams []*gameserver.EventStream
	opened  chan struct{} // one value per stream opened
}

func newHub() *hub { return &hub{opened: make(chan struct{}, 2000)} }

func (h *hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/events" {
		io.WriteString(w, "plain "+r.URL.Path)
		return
	}
	err := gameserver.Stream(w, r, func(s *gameserver.EventStream) {
		s.WriteString(": welcome\n\n")
		h.mu.Lock()
		h.streams = append(h.streams, s)
		h.mu.Unlock()
		h.opened <- struct{}{}
	})
	if errors.Is(err, gameserver.ErrTooManyStreams) {
		// As a game answers it.
		w.Header().Set("Retry-After", "5")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	} else if err != nil {
		panic(err)
	}
}

func (h *hub) broadcast(p string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return gameserver.Broadcast(h.streams, []byte(p))
}

func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.streams {
		s.Close()
	}
}

// waitOpened waits for n streams to open.
func (h *hub) waitOpened(t testing.TB, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-h.opened:
		case <-time.After(ioTimeout):
			t.Fatalf("only %d of %d streams opened", i, n)
		}
	}
}

// chunk is an event as a chunk of an HTTP/1.1 stream.
func chunk(p string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(p), p) }

// readN reads exactly n bytes.
func (cl *client) readN(n int) string {
	cl.t.Helper()
	require.NoError(cl.t, cl.c.SetReadDeadline(time.Now().Add(ioTimeout)))
	b := make([]byte, n)
	_, err := io.ReadFull(cl.br, b)
	require.NoError(cl.t, err, "reading %d bytes, got %q", n, b)
	return string(b)
}

const welcome = ": welcome\n\n"

func TestStreamBroadcastThousand(t *testing.T) {
	t.Parallel()
	// Ensure 1,000 open streams each receive, byte for byte, an event
	// broadcast from a timer, after the header sent at once; that a
	// client that goes away closes its stream and cancels its request's
	// context; and that Stats counts the open streams.
	const n = 1000
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = dial(t, addr)
		clients[i].writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	}
	h.waitOpened(t, n)
	for _, cl := range clients {
		resp := parseHead(t, cl.readHead())
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
		require.Equal(t, chunk(welcome), cl.readN(len(chunk(welcome))))
	}
	// Stats are published at the end of each loop turn, after its writes.
	eventually(t, func() bool { return s.Stats().Streams == n }, "Streams, want %d", n)

	event := "event: tick\ndata: " + strings.Repeat("x", 100) + "\n\n"
	reached := make(chan int, 1)
	s.AfterFunc(10*time.Millisecond, func() { reached <- h.broadcast(event) })
	assert.Equal(t, n, <-reached)
	for _, cl := range clients {
		require.Equal(t, chunk(event), cl.readN(len(chunk(event))))
	}

	clients[0].c.Close()
	eventually(t, func() bool { return s.Stats().Streams == n-1 }, "a closed client's stream is still open")
	gone := make(chan int, 1)
	require.NoError(t, s.Post(func() {
		n := 0
		for _, st := range h.streams {
			if st.Closed() {
				n++
			}
		}
		gone <- n
	}))
	assert.Equal(t, 1, <-gone, "streams closed") // the streams are in the order served, not dialed
	reached = make(chan int, 1)
	require.NoError(t, s.Post(func() { reached <- h.broadcast("data: 2\n\n") }))
	assert.Equal(t, n-1, <-reached)
	require.NoError(t, s.Post(h.closeAll))
	for _, cl := range clients[1:] {
		require.Equal(t, chunk("data: 2\n\n")+"0\r\n\r\n", cl.readN(len(chunk("data: 2\n\n"))+5))
	}
	// Closed, a stream's connection serves its next request.
	resp, body := clients[1].get("/after")
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "plain /after", body)
	eventually(t, func() bool { return s.Stats().Streams == 0 }, "streams still counted open")
}

// neverReadingStream serves one stream, bounded by limit, to a client
// with a small receive buffer that never reads.
func neverReadingStream(t *testing.T, limit int) (*hub, *gameserver.Server) {
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h, StreamBuffer: limit})
	cl := dial(t, addr)
	require.NoError(t, cl.c.SetReadBuffer(4096))
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	return h, s
}

func TestStreamSlowReaderCut(t *testing.T) {
	// Not parallel: it measures the heap.
	// Ensure a stream whose client never reads is cut off once more than
	// StreamBuffer is queued for it, counted in Stats.StreamsCut, and that
	// the server's heap meanwhile stays within a few StreamBuffers.
	const limit = 256 << 10
	h, s := neverReadingStream(t, limit)

	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	event := []byte("data: " + strings.Repeat("y", 16<<10) + "\n\n")
	cut := make(chan int64, 1)
	var written int64
	var peak uint64
	done := false // touched only on the loop
	ticker := s.Every(time.Millisecond, func() {
		for range 4 {
			if done {
				return
			}
			if _, err := h.streams[0].Write(event); err != nil {
				done = true
				cut <- written
				return
			}
			written += int64(len(event))
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapAlloc)
	})
	var total int64
	select {
	case total = <-cut:
	case <-time.After(4 * ioTimeout):
		t.Fatal("a never-reading stream was not cut off")
	}
	ticker.Stop()
	t.Logf("cut after %d bytes written (kernel buffers plus StreamBuffer); heap peak %d KiB over %d KiB",
		total, (peak-min(peak, base.HeapAlloc))>>10, base.HeapAlloc>>10)
	assert.Less(t, total, int64(64<<20), "the stream was cut only after far more than StreamBuffer")
	assert.Less(t, peak-min(peak, base.HeapAlloc), uint64(16*limit+8<<20), "the heap grew with the unread stream")
	eventually(t, func() bool { st := s.Stats(); return st.StreamsCut == 1 && st.Streams == 0 && st.OpenConns == 0 },
		"the cut stream is not counted or its connection is open: %+v", s.Stats())
}

func TestStreamHTTP10(t *testing.T) {
	t.Parallel()
	// Ensure a stream to an HTTP/1.0 client is close-delimited: no
	// chunked coding, "Connection: close", the events as written, and the
	// connection's end after Close.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	cl := dial(t, addr)
	cl.writeAll("GET /events HTTP/1.0\r\n\r\n")
	h.waitOpened(t, 1)
	head := cl.readHead()
	resp := parseHead(t, head)
	assert.Empty(t, resp.TransferEncoding)
	assert.NotContains(t, head, "Content-Length")
	assert.True(t, resp.Close)
	assert.Equal(t, welcome, cl.readN(len(welcome)))
	require.NoError(t, s.Post(func() {
		h.broadcast("data: one\n\n")
		h.streams[0].WriteString("data: two\n\n")
		h.streams[0].Close()
	}))
	assert.Equal(t, "data: one\n\ndata: two\n\n", cl.readUntilEOF())
}

func TestStreamHEAD(t *testing.T) {
	t.Parallel()
	// Ensure a HEAD request to a stream gets the stream's header and no
	// body, opens no stream, and the connection serves on.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	cl := dial(t, addr)
	cl.writeAll("HEAD /events HTTP/1.1\r\nHost: t\r\n\r\n")
	head := cl.readRaw(http.MethodHead)
	resp := parseHead(t, head)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	_, body := cl.get("/next")
	assert.Equal(t, "plain /next", body)
	assert.Empty(t, h.opened)
	assert.Zero(t, s.Stats().Streams)
}

func TestStreamShutdown(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown ends every stream cleanly: the events queued, the
	// last chunk, then the connection's end; and Shutdown returns nil.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	var clients []*client
	for range 3 {
		cl := dial(t, addr)
		cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
		clients = append(clients, cl)
	}
	h.waitOpened(t, 3)
	for _, cl := range clients {
		cl.readHead()
	}
	shut := startShutdown(t, s, addr)
	for _, cl := range clients {
		assert.Equal(t, chunk(welcome)+"0\r\n\r\n", cl.readUntilEOF())
	}
	select {
	case err := <-shut:
		assert.NoError(t, err)
	case <-time.After(ioTimeout):
		t.Fatal("Shutdown did not return after ending the streams")
	}
}

func TestStreamWriteTimeout(t *testing.T) {
	t.Parallel()
	// Ensure a stream whose client takes nothing is closed after
	// WriteTimeout: a response in progress still has a write deadline.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h, WriteTimeout: 300 * time.Millisecond, StreamBuffer: -1})
	cl := dial(t, addr)
	require.NoError(t, cl.c.SetReadBuffer(4096))
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	require.NoError(t, s.Post(func() { h.streams[0].WriteString(strings.Repeat("z", 16<<20)) }))
	eventually(t, func() bool { return s.Stats().OpenConns == 0 }, "a stream nobody reads outlived WriteTimeout")
	assert.Zero(t, s.Stats().StreamsCut)
}

func TestStreamFallback(t *testing.T) {
	t.Parallel()
	// Ensure the same streaming handler works under net/http: Stream holds
	// the handler, and events written or broadcast from another goroutine
	// reach the client, until Close ends the response.
	h := newHub()
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := dial(t, srv.Listener.Addr().String())
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	resp := parseHead(t, cl.readHead())
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, chunk(welcome), cl.readN(len(chunk(welcome))))
	assert.Equal(t, 1, h.broadcast("data: net/http\n\n"))
	assert.Equal(t, chunk("data: net/http\n\n"), cl.readN(len(chunk("data: net/http\n\n"))))
	h.closeAll()
	assert.Equal(t, "0\r\n\r\n", cl.readN(5))
	assert.True(t, h.streams[0].Closed())
	_, err := h.streams[0].WriteString("late")
	assert.ErrorIs(t, err, gameserver.ErrStreamClosed)
}

func TestStreamFromFinish(t *testing.T) {
	t.Parallel()
	// Ensure a deferred response can become a stream when it is finished
	// (a long poll that turns into a feed), and a stream cannot start
	// after the header was written.
	h := newHub()
	errs := make(chan error, 1)
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			w.WriteHeader(http.StatusAccepted)
			errs <- gameserver.Stream(w, r, func(*gameserver.EventStream) {})
			return
		}
		d, _ := gameserver.Defer(w)
		go d.Finish(func(w http.ResponseWriter) { h.ServeHTTP(w, r) })
	})})
	cl := dial(t, addr)
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	resp := parseHead(t, cl.readHead())
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, chunk(welcome), cl.readN(len(chunk(welcome))))
	require.NoError(t, s.Post(h.closeAll))
	assert.Equal(t, "0\r\n\r\n", cl.readN(5))
	eventually(t, func() bool { st := s.Stats(); return st.Streams == 0 && st.Deferred == 0 }, "counts: %+v", s.Stats())

	resp, _ = cl.get("/late")
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.ErrorContains(t, <-errs, "after the response's header")
}

func TestStreamsLeaveRoomForPages(t *testing.T) {
	t.Parallel()
	// Ensure that, with the default MaxStreams, clients asking for as
	// many streams as MaxConns allows connections still leave room for
	// pages: with MaxConns 8, 6 streams open and the rest are refused with
	// ErrTooManyStreams (answered 503 by the handler, on a connection that
	// stays usable), and a new connection is served a page while the 6
	// streams stay open.
	const maxConns = 8
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h, MaxConns: maxConns, MaxConnsPerAddr: -1})
	var refused []*client
	for range maxConns - 1 {
		cl := dial(t, addr)
		cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
		resp := parseHead(t, cl.readHead())
		if resp.StatusCode == http.StatusServiceUnavailable {
			require.Equal(t, "5", resp.Header.Get("Retry-After"))
			refused = append(refused, cl)
			continue
		}
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, chunk(welcome), cl.readN(len(chunk(welcome))))
	}
	h.waitOpened(t, maxConns*3/4)
	require.Len(t, refused, maxConns-1-maxConns*3/4, "streams refused")
	// Stats are published at the end of the turn that wrote the 503.
	eventually(t, func() bool {
		st := s.Stats()
		return st.Streams == maxConns*3/4 && st.StreamsRefused == uint64(len(refused))
	}, "Streams and StreamsRefused: %+v", s.Stats())

	page := dial(t, addr)
	resp, body := page.get("/index")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "plain /index", body)
	assert.Equal(t, uint64(0), s.Stats().RejectedConns)
}

func TestStreamCutAtMemoryHeld(t *testing.T) {
	// Not parallel: it measures the heap.
	// Ensure a never-reading stream fed a game's mix, a broadcast event
	// then a small event of its own, over and over (the mix that held
	// 4,050 KiB for 204 KB queued when the bound counted bytes queued), is
	// cut once the memory its output holds passes StreamBuffer, not
	// later; and that what the server counts as held is what the heap
	// holds for it at most (runtime.MemStats, within a generous bound; the
	// heap may grow by less, as pooled buffers are reused).
	const limit = 256 << 10
	h, s := neverReadingStream(t, limit)

	shared := "event: change\ndata: " + strings.Repeat("s", 12<<10) + "\n\n"
	own := []byte("event: you\ndata: " + strings.Repeat("o", 80) + "\n\n")
	type result struct {
		maxHeld, lastQueued int
		baseHeap, heldHeap  uint64
		heldAtMeasure       int
	}
	cut := make(chan result, 1)
	var r result
	done := false // touched only on the loop
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ticker := s.Every(time.Millisecond, func() {
		for range 8 {
			if done {
				return
			}
			st := h.streams[0]
			held, queued := gameserver.StreamHeld(st)
			switch {
			case queued == 0:
				r.baseHeap = 0 // the kernel still takes everything
			case r.baseHeap == 0:
				r.baseHeap = heap()
			case r.heldHeap == 0 && held > limit/2:
				r.heldHeap, r.heldAtMeasure = heap(), held
			}
			r.maxHeld, r.lastQueued = max(r.maxHeld, held), queued
			n := gameserver.Broadcast(h.streams, []byte(shared))
			if _, err := st.Write(own); n == 0 || err != nil {
				done = true
				cut <- r
				return
			}
		}
	})
	select {
	case r = <-cut:
	case <-time.After(4 * ioTimeout):
		t.Fatal("a never-reading stream was not cut off")
	}
	ticker.Stop()
	growth := int(r.heldHeap) - int(r.baseHeap)
	t.Logf("before the cut: %d KiB held for %d KiB queued; at %d KiB counted held the heap had grown %d KiB",
		r.maxHeld>>10, r.lastQueued>>10, r.heldAtMeasure>>10, growth>>10)
	// The largest step between two checks is one shared event and one
	// pooled buffer.
	assert.LessOrEqual(t, r.maxHeld, limit+len(shared)+64+16<<10, "held more than StreamBuffer before the cut")
	require.NotZero(t, r.heldHeap, "the queue never held half of StreamBuffer")
	assert.Less(t, growth, 2*r.heldAtMeasure+(1<<20), "the heap grew by far more than counted held")
	eventually(t, func() bool { st := s.Stats(); return st.StreamsCut == 1 && st.Streams == 0 && st.OpenConns == 0 },
		"the cut stream is not counted or its connection is open: %+v", s.Stats())
}
