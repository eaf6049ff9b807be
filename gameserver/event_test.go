package gameserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

func TestEventText(t *testing.T) {
	// Ensure an Event is framed as WHATWG's text/event-stream: id, event
	// and retry fields as given, a data field per line of Data whatever
	// ends its lines, the empty line last; and one whose id or type would
	// break a field is refused.
	for _, tc := range []struct {
		name string
		e    gameserver.Event
		want string
	}{
		{"Data", gameserver.Event{Data: "hello"}, "data: hello\n\n"},
		{"All", gameserver.Event{ID: "42", Event: "news", Data: "a", Retry: 2500 * time.Millisecond},
			"event: news\nid: 42\nretry: 2500\ndata: a\n\n"},
		{"Lines", gameserver.Event{Data: "a\r\nb\rc\nd"}, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"TrailingLineEnd", gameserver.Event{Data: "a\n"}, "data: a\ndata: \n\n"},
		{"LeadingSpace", gameserver.Event{Data: " indented"}, "data:  indented\n\n"},
		{"NoData", gameserver.Event{ID: "7"}, "id: 7\n\n"},
		{"Empty", gameserver.Event{}, "\n"},
		{"NegativeRetry", gameserver.Event{Data: "x", Retry: -time.Second}, "data: x\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.e.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	for _, e := range []gameserver.Event{{ID: "a\nb"}, {ID: "a\rb"}, {ID: "a\x00b"}, {Event: "x\ny"}, {Event: "x\r"}} {
		_, err := e.MarshalText()
		assert.ErrorIs(t, err, gameserver.ErrEventField, "%+v", e)
	}
}

func TestEventRoundTrip(t *testing.T) {
	// Ensure what a client reads back, by WHATWG's algorithm, is the event
	// written: its id, type and data, line ends as LF.
	for _, data := range []string{"x", "two\nlines", "crlf\r\nand cr\rend", "\n", "\n\n", "trailing\r\n", " space", "data: inside", ":colon"} {
		e := gameserver.Event{ID: "id-1", Event: "t", Data: data}
		text, err := e.MarshalText()
		require.NoError(t, err)
		got := testkit.ParseEvents(string(text))
		require.Len(t, got, 1, "%q framed as %q", data, text)
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
		assert.Equal(t, testkit.Event{ID: "id-1", Event: "t", Data: want}, got[0], "%q framed as %q", data, text)
	}
}

func TestStreamWriteEvent(t *testing.T) {
	t.Parallel()
	// Ensure WriteEvent queues the framed event on a stream, refuses an
	// event it cannot frame without writing, and reports a closed stream.
	h := newHub()
	addr, s := startServer(t, gameserver.Config{Handler: h})
	cl := dial(t, addr)
	cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
	h.waitOpened(t, 1)
	cl.readHead()
	errs := make(chan error, 3)
	require.NoError(t, s.Post(func() {
		es := h.streams[0]
		errs <- es.WriteEvent(gameserver.Event{ID: "1\n", Data: "bad"})
		errs <- es.WriteEvent(gameserver.Event{ID: "1", Event: "tick", Data: "a\nb"})
		es.Close()
		errs <- es.WriteEvent(gameserver.Event{Data: "late"})
	}))
	assert.ErrorIs(t, <-errs, gameserver.ErrEventField)
	assert.NoError(t, <-errs)
	assert.ErrorIs(t, <-errs, gameserver.ErrStreamClosed)
	event := "event: tick\nid: 1\ndata: a\ndata: b\n\n"
	assert.Equal(t, chunk(welcome)+chunk(event)+"0\r\n\r\n", cl.readN(len(chunk(welcome)+chunk(event))+5))
}

// endings records on the loop which streams' OnClose functions ran, in
// order.
type endings struct {
	h     *hub
	order []int // touched only on the loop
	ended chan int
}

// openStreams opens n streams on a server of their own, each with an
// OnClose function that records its index on the loop.
func openStreams(t *testing.T, n int, cfg gameserver.Config) (*endings, *gameserver.Server, []*client) {
	t.Helper()
	en := &endings{h: newHub(), ended: make(chan int, n)}
	cfg.Handler = en.h
	addr, s := startServer(t, cfg)
	var clients []*client
	for i := range n {
		cl := dial(t, addr)
		cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
		en.h.waitOpened(t, 1)
		cl.readHead()
		require.NoError(t, s.Post(func() {
			en.h.streams[i].OnClose(func() {
				en.order = append(en.order, i)
				en.ended <- i
			})
		}))
		clients = append(clients, cl)
	}
	return en, s, clients
}

// wait returns the index of the next stream whose OnClose ran.
func (en *endings) wait(t *testing.T) int {
	t.Helper()
	select {
	case i := <-en.ended:
		return i
	case <-time.After(ioTimeout):
		t.Fatal("no stream's OnClose ran")
		return -1
	}
}

func TestStreamOnClose(t *testing.T) {
	t.Parallel()
	// Ensure OnClose's function runs once, on the loop, however the stream
	// ends: closed by the server, its client gone, cut at its buffer, and
	// Shutdown; and at once for a stream that has ended already.
	en, s, clients := openStreams(t, 4, gameserver.Config{StreamBuffer: 64 << 10})
	require.NoError(t, s.Post(func() { en.h.streams[0].Close() }))
	assert.Equal(t, 0, en.wait(t), "Close")
	clients[1].c.Close()
	assert.Equal(t, 1, en.wait(t), "the client went away")
	require.NoError(t, clients[2].c.SetReadBuffer(4096))
	require.NoError(t, s.Post(func() { en.h.streams[2].WriteString(strings.Repeat("z", 8<<20)) }))
	assert.Equal(t, 2, en.wait(t), "cut at StreamBuffer")
	late := make(chan bool, 1)
	require.NoError(t, s.Post(func() { en.h.streams[0].OnClose(func() { late <- true }) }))
	select {
	case <-late:
	case <-time.After(ioTimeout):
		t.Fatal("OnClose on a stream that had ended did not run")
	}
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	assert.Equal(t, 3, en.wait(t), "Shutdown")
	require.NoError(t, <-shut)
	assert.Equal(t, []int{0, 1, 2, 3}, en.order, "each once")
	assert.Empty(t, en.ended)
}

func TestStreamOnCloseWhileBroadcasting(t *testing.T) {
	t.Parallel()
	// Ensure OnClose's function runs after the function that ended the
	// stream returns: streams closed, and cut off, while the caller goes
	// through its set of streams leave that set alone until it is done.
	en, s, _ := openStreams(t, 3, gameserver.Config{})
	during := make(chan []int, 1)
	require.NoError(t, s.Post(func() {
		for _, es := range en.h.streams {
			es.Close()
		}
		during <- append([]int(nil), en.order...)
	}))
	assert.Empty(t, <-during, "no OnClose ran inside the function that closed the streams")
	for range 3 {
		en.wait(t)
	}
	assert.Equal(t, []int{0, 1, 2}, en.order)
}

func TestStreamOnCloseFallback(t *testing.T) {
	t.Parallel()
	// Ensure OnClose works under net/http too, through Serial: its
	// function runs once the stream ends (closed, or its client gone),
	// under Serial's lock, as the handlers run.
	h := newHub()
	serial := gameserver.Serial(h)
	srv := httptest.NewServer(serial)
	defer srv.Close()
	ended := make(chan bool, 2)
	var inLock int // touched only under Serial's lock
	for range 2 {
		cl := dial(t, srv.Listener.Addr().String())
		cl.writeAll("GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
		h.waitOpened(t, 1)
		cl.readHead()
		t.Cleanup(func() { cl.c.Close() })
	}
	serial.Do(func() {
		for _, es := range h.streams {
			es.OnClose(func() {
				inLock++
				ended <- true
			})
		}
	})
	h.closeAll()
	for range 2 {
		select {
		case <-ended:
		case <-time.After(ioTimeout):
			t.Fatal("OnClose did not run under net/http")
		}
	}
	serial.Do(func() { assert.Equal(t, 2, inLock) })
	resp, err := http.Get(srv.URL + "/plain")
	require.NoError(t, err)
	resp.Body.Close()
}
