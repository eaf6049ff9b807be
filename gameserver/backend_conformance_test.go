package gameserver

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBackendConformance is the back-end contract (backend.go) checked
// through a running server, the same on both back ends: go test
// ./gameserver runs it on epoll (on Linux), go test -tags
// gameserver_portable ./gameserver on the net package. Each case is one
// report the loop must get, or one decision the loop, not the back end,
// must make.
func TestBackendConformance(t *testing.T) {
	t.Run("AcceptReadWrite", func(t *testing.T) {
		// Accept, read and write: a request's bytes and its response's
		// are counted exactly (onInput, onWritten).
		s, addr, _ := startLoop(t, Config{})
		c, br := dialLoop(t, addr)
		req := "GET /x HTTP/1.1\r\nHost: t\r\n\r\n"
		_, err := io.WriteString(c, req)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "ok /x", string(body))
		require.Eventually(t, func() bool { return s.Stats().BytesWritten > 0 }, waitLimit, time.Millisecond)
		st := s.Stats()
		assert.Equal(t, uint64(len(req)), st.BytesRead)
		assert.Equal(t, uint64(responseSize(t, resp, len(body))), st.BytesWritten)
		assert.Equal(t, uint64(1), st.AcceptedConns)
	})

	t.Run("Admit", func(t *testing.T) {
		// The loop admits connections up to MaxConns (admit); one over
		// it, with no idle connection to close instead (each holds a
		// request partly sent), is closed at once, unread, and counted.
		s, addr, _ := startLoop(t, Config{MaxConns: 2, MaxConnsPerAddr: -1})
		for range 2 {
			c, br := dialLoop(t, addr)
			_, body := get(t, c, br, "/in")
			assert.Equal(t, "ok /in", body)
			_, err := io.WriteString(c, "GET /next HTTP/1.1\r\nHo")
			require.NoError(t, err)
		}
		over, br := dialLoop(t, addr)
		io.WriteString(over, "GET /over HTTP/1.1\r\nHost: t\r\n\r\n") // may fail: the server may have closed
		_, err := br.ReadByte()
		assert.Error(t, err, "a connection over MaxConns was served")
		require.Eventually(t, func() bool { return s.Stats().RejectedConns == 1 }, waitLimit, time.Millisecond)
		assert.Equal(t, 2, s.Stats().OpenConns)
	})

	t.Run("EOF", func(t *testing.T) {
		// A client that half-closes after its request gets the whole
		// response, then the connection closes (onEOF).
		_, addr, _ := startLoop(t, Config{})
		c, br := dialLoop(t, addr)
		_, err := io.WriteString(c, "GET /eof HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		require.NoError(t, c.(*net.TCPConn).CloseWrite())
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "ok /eof", string(body))
		awaitEOF(t, br)
	})

	t.Run("HangupWhileHeld", func(t *testing.T) {
		// A client that goes away while its response is deferred is
		// noticed at once (onHangup, or onEOF while held): the
		// response's context is canceled and the connection closed.
		canceled := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Defer(w)
			ctx := r.Context()
			go func() { <-ctx.Done(); close(canceled) }()
		})
		s, addr, _ := startLoop(t, Config{Handler: h})
		c, _ := dialLoop(t, addr)
		_, err := io.WriteString(c, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return s.Stats().Deferred == 1 }, waitLimit, time.Millisecond)
		c.Close()
		waitFor(t, canceled)
		require.Eventually(t, func() bool { st := s.Stats(); return st.Deferred == 0 && st.OpenConns == 0 },
			waitLimit, time.Millisecond)
	})

	t.Run("TurnShare", func(t *testing.T) {
		// The loop gives each write at most writeCap (write's limit): a
		// 4 MiB response takes at least 16 turns on either back end, and
		// arrives whole.
		big := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
		s, addr, _ := startLoop(t, Config{Handler: h})
		c, br := dialLoop(t, addr)
		before := s.Stats().LoopTurns
		_, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(big, body), "the response arrived changed")
		assert.GreaterOrEqual(t, s.Stats().LoopTurns-before, uint64(len(big)/writeCap))
	})

	t.Run("WriteTimeout", func(t *testing.T) {
		// Output nobody takes for WriteTimeout closes the connection:
		// the loop's deadline, armed when output waits, on either back
		// end.
		big := bytes.Repeat([]byte("x"), 32<<20)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
		s, addr, _ := startLoop(t, Config{Handler: h, WriteTimeout: 200 * time.Millisecond})
		c, _ := dialLoop(t, addr)
		require.NoError(t, c.(*net.TCPConn).SetReadBuffer(4096))
		_, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
		require.NoError(t, err)
		require.Eventually(t, func() bool { st := s.Stats(); return st.Requests == 1 && st.OpenConns == 0 },
			waitLimit, 5*time.Millisecond, "a connection that takes nothing outlived WriteTimeout")
	})

	t.Run("NoDelay", func(t *testing.T) {
		// The loop turns Nagle's algorithm off on a connection that
		// outlives its first response (noDelay), not on one that closes
		// after it.
		s, addr, _ := startLoop(t, Config{})
		keep, kbr := dialLoop(t, addr)
		get(t, keep, kbr, "/keep")
		closing, cbr := dialLoop(t, addr)
		_, err := io.WriteString(closing, "GET /close HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		_, err = io.ReadAll(cbr)
		require.NoError(t, err)
		nodelay := make(chan []bool, 1)
		require.NoError(t, s.Post(func() {
			var open []bool
			s.loop.sys.each(func(c *conn) { open = append(open, c.nodelay) })
			nodelay <- open
		}))
		select {
		case open := <-nodelay:
			assert.Equal(t, []bool{true}, open, "the kept connection, and it alone, is left")
		case <-time.After(waitLimit):
			t.Fatal("the posted check never ran")
		}
	})

	t.Run("AcceptErrorsOncePerEpisode", func(t *testing.T) {
		// The loop logs a back end's accept failures once per episode,
		// until an accept succeeds (admit).
		var logged atomic.Int32
		logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logged.Add(1)
			return len(p), nil
		}), nil))
		s, addr, _ := startLoop(t, Config{Logger: logger})
		fail := func() {
			done := make(chan struct{})
			require.NoError(t, s.Post(func() {
				for range 5 {
					s.loop.acceptFailed(errors.New("too many open files"))
				}
				close(done)
			}))
			waitFor(t, done)
		}
		fail()
		assert.Equal(t, int32(1), logged.Load())
		c, br := dialLoop(t, addr) // an accept succeeds: the episode ends
		get(t, c, br, "/")
		fail()
		assert.Equal(t, int32(2), logged.Load())
	})
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
