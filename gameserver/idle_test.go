package gameserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idleWait is long enough for every connection idle before it to be
// closed to make room (minEvictIdle), with a margin.
const idleWait = minEvictIdle + 200*time.Millisecond

// keptConn is a client connection of these tests.
type keptConn struct {
	c  net.Conn
	br *bufio.Reader
}

// dialKept connects to addr and has one response on the connection, so
// that it is idle between requests (keep-alive).
func dialKept(t *testing.T, addr, path string) keptConn {
	t.Helper()
	c, br := dialLoop(t, addr)
	_, body := get(t, c, br, path)
	require.Equal(t, "ok "+path, body)
	return keptConn{c, br}
}

// evictHandler answers "ok PATH", defers /defer and opens a stream on
// /events, neither ever finished.
func evictHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/defer":
			Defer(w)
		case "/events":
			Stream(w, r, func(s *EventStream) {})
		default:
			io.WriteString(w, "ok "+r.URL.Path)
		}
	})
}

// TestEvictIdle checks Config.MaxConns's contract, on either back end: a
// connection accepted at the cap is served in place of the connection idle
// the longest, if it has been idle for minEvictIdle; streams, deferred
// responses and requests partly received are never closed for it.
func TestEvictIdle(t *testing.T) {
	t.Parallel()
	t.Run("Oldest", func(t *testing.T) {
		t.Parallel()
		// Ensure a new client at the cap of idle keep-alives is served,
		// the one idle the longest is the one closed, and it counts.
		s, addr, _ := startLoop(t, Config{MaxConns: 3, MaxConnsPerAddr: -1})
		kept := []keptConn{dialKept(t, addr, "/a"), dialKept(t, addr, "/b"), dialKept(t, addr, "/c")}
		time.Sleep(idleWait)
		fresh := dialKept(t, addr, "/new")
		awaitEOF(t, kept[0].br)
		for _, k := range append(kept[1:], fresh) {
			_, body := get(t, k.c, k.br, "/again")
			assert.Equal(t, "ok /again", body, "a connection other than the oldest idle one was closed")
		}
		st := s.Stats()
		assert.Equal(t, uint64(1), st.EvictedIdleConns)
		assert.Zero(t, st.RejectedConns)
		assert.Equal(t, 3, st.OpenConns)
	})

	t.Run("ActiveSurvives", func(t *testing.T) {
		t.Parallel()
		// Ensure a keep-alive connection with a recent request outlives
		// one opened after it that has been idle longer.
		s, addr, _ := startLoop(t, Config{MaxConns: 2, MaxConnsPerAddr: -1})
		active, quiet := dialKept(t, addr, "/active"), dialKept(t, addr, "/quiet")
		time.Sleep(idleWait)
		get(t, active.c, active.br, "/again")
		dialKept(t, addr, "/new")
		awaitEOF(t, quiet.br)
		_, body := get(t, active.c, active.br, "/still")
		assert.Equal(t, "ok /still", body, "the active connection was closed")
		assert.Equal(t, uint64(1), s.Stats().EvictedIdleConns)
	})

	t.Run("HeldNever", func(t *testing.T) {
		t.Parallel()
		// Ensure a stream, a deferred response and a request partly
		// received are never closed to make room: at a cap of them, a
		// new client is refused, as it was before idle connections could
		// be closed, and only the idle connection is closed.
		s, addr, _ := startLoop(t, Config{Handler: evictHandler(), MaxConns: 4, MaxConnsPerAddr: -1, MaxStreams: -1})
		stream, _ := dialLoop(t, addr)
		_, err := io.WriteString(stream, "GET /events HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		deferred, _ := dialLoop(t, addr)
		_, err = io.WriteString(deferred, "GET /defer HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		partial, _ := dialLoop(t, addr)
		_, err = io.WriteString(partial, "GET /partial HTTP/1.1\r\nHo")
		require.NoError(t, err)
		idle := dialKept(t, addr, "/idle")
		require.Eventually(t, func() bool { st := s.Stats(); return st.Streams == 1 && st.Deferred == 1 },
			waitLimit, time.Millisecond)
		time.Sleep(idleWait)

		// The idle one makes room for the first new client, which then
		// holds its place with a request partly sent.
		next := dialKept(t, addr, "/next")
		awaitEOF(t, idle.br)
		_, err = io.WriteString(next.c, "GET /partial HTTP/1.1\r\nHo")
		require.NoError(t, err)
		time.Sleep(idleWait)
		refused, br := dialLoop(t, addr)
		io.WriteString(refused, "GET /refused HTTP/1.1\r\nHost: t\r\n\r\n") // may fail: the server may have closed
		_, err = br.ReadByte()
		assert.Error(t, err, "a connection at a cap of held ones was served")
		require.Eventually(t, func() bool { return s.Stats().RejectedConns == 1 }, waitLimit, time.Millisecond)
		st := s.Stats()
		assert.Equal(t, uint64(1), st.EvictedIdleConns)
		assert.Equal(t, 4, st.OpenConns)
		assert.Equal(t, 1, st.Streams)
		assert.Equal(t, 1, st.Deferred)
	})

	t.Run("RecentNot", func(t *testing.T) {
		t.Parallel()
		// Ensure a connection idle for less than minEvictIdle is not
		// closed to make room: its client may be sending its next
		// request just now.
		s, addr, _ := startLoop(t, Config{MaxConns: 1, MaxConnsPerAddr: -1})
		start := time.Now()
		kept := dialKept(t, addr, "/kept")
		refused, br := dialLoop(t, addr)
		// A request makes the listener hand the connection over at once,
		// under TCP_DEFER_ACCEPT as without it.
		io.WriteString(refused, "GET /refused HTTP/1.1\r\nHost: t\r\n\r\n") // may fail: the server may have closed
		_, err := br.ReadByte()
		if time.Since(start) >= minEvictIdle {
			t.Skip("the machine took longer than minEvictIdle to get here")
		}
		assert.Error(t, err, "a connection at the cap was served")
		_, body := get(t, kept.c, kept.br, "/again")
		assert.Equal(t, "ok /again", body)
		assert.Zero(t, s.Stats().EvictedIdleConns)
	})
}

// TestEvictIdleReadsFirst ensures that an idle connection whose next
// request has reached its socket, unread by the loop, is not closed to
// make room (its request would be reset): the epoll back end reads and
// serves it (readNow), the portable one sees the bytes waiting (unread),
// and the next idle connection is closed instead.
func TestEvictIdleReadsFirst(t *testing.T) {
	t.Parallel()
	s, addr, _ := startLoop(t, Config{MaxConns: 2, MaxConnsPerAddr: -1})
	oldest := dialKept(t, addr, "/oldest")
	other := dialKept(t, addr, "/other")
	time.Sleep(idleWait)

	admitted, evicted := make(chan bool, 1), make(chan uint64, 1)
	require.NoError(t, s.Post(func() {
		// The loop waits here, so it reads nothing until admit does.
		l := &s.loop
		c := connFrom(l, oldest.c.LocalAddr().String())
		_, err := io.WriteString(oldest.c, "GET /arrived HTTP/1.1\r\nHost: t\r\n\r\n")
		assert.NoError(t, err) // not require: this is the loop's goroutine
		for deadline := time.Now().Add(waitLimit); l.sys.unread(c) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		admitted <- l.admit(netip.Addr{})
		evicted <- l.count.EvictedIdleConns
	}))
	assert.True(t, <-admitted, "no room was made")
	assert.Equal(t, uint64(1), <-evicted)
	resp, err := http.ReadResponse(oldest.br, nil)
	require.NoError(t, err, "the request that had arrived was not served")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "ok /arrived", string(body))
	awaitEOF(t, other.br)
}

// connFrom returns the loop's connection from the client address remote;
// call it on the loop.
func connFrom(l *loop, remote string) *conn {
	var found *conn
	l.sys.each(func(c *conn) {
		if strings.EqualFold(c.remote, remote) {
			found = c
		}
	})
	return found
}
