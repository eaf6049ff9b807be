package gameserver_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveRaw serves cfg on 127.0.0.1:0 without startServer's cleanup checks,
// for tests where Serve must not return ErrServerClosed. It returns the
// address, the server and Serve's result.
func serveRaw(t *testing.T, cfg gameserver.Config) (string, *gameserver.Server, <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := gameserver.New(cfg)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() { s.Close() })
	return l.Addr().String(), s, served
}

// dialServed connects to addr and has one request answered "ok", so the
// connection is accepted and idle on the loop.
func dialServed(t *testing.T, addr string) *client {
	t.Helper()
	cl := dial(t, addr)
	resp, body := cl.get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok", body)
	return cl
}

// A handler, timer or posted function that calls runtime.Goexit ends the
// loop goroutine; the server notices, logs it, closes every connection and
// stops, and Serve says why.
func TestGoexitStopsServer(t *testing.T) {
	for _, where := range []string{"handler", "posted function", "timer"} {
		t.Run(where, func(t *testing.T) {
			var logs testkit.LogBuffer
			addr, s, served := serveRaw(t, gameserver.Config{
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/goexit" {
						io.WriteString(w, "never sent")
						runtime.Goexit()
					}
					io.WriteString(w, "ok")
				}),
			})
			idle := dialServed(t, addr)

			switch where {
			case "handler":
				cl := dial(t, addr)
				cl.writeAll("GET /goexit HTTP/1.1\r\nHost: t\r\n\r\n")
				assert.Empty(t, cl.readUntilEOF(), "a response from a handler that called Goexit")
			case "posted function":
				require.NoError(t, s.Post(runtime.Goexit))
			case "timer":
				s.AfterFunc(0, runtime.Goexit)
			}

			select {
			case err := <-served:
				assert.ErrorIs(t, err, gameserver.ErrLoopExited)
			case <-time.After(ioTimeout):
				t.Fatal("Serve did not return after runtime.Goexit on the loop")
			}
			assert.Contains(t, logs.String(), "runtime.Goexit")
			assert.Empty(t, idle.readUntilEOF(), "the idle connection is closed")
			assert.ErrorIs(t, s.Post(func() {}), gameserver.ErrServerClosed)
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			defer cancel()
			assert.NoError(t, s.Shutdown(ctx))
			assert.NoError(t, s.Close())
			_, err := net.DialTimeout("tcp", addr, ioTimeout)
			assert.Error(t, err, "the listener is closed")
		})
	}
}

// Shutdown and Close called on the loop goroutine cannot wait for the loop
// they run on: they start the stop, return ErrLoopGoroutine at once instead
// of deadlocking, and the loop stops after the calling function returns.
func TestStopFromLoopGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stop  func(*gameserver.Server) error
		reply bool // the stopping handler's response is still sent (graceful)
	}{
		{"Shutdown", func(s *gameserver.Server) error { return s.Shutdown(context.Background()) }, true},
		{"Close", (*gameserver.Server).Close, false},
	} {
		for _, where := range []string{"handler", "posted function", "timer"} {
			t.Run(tc.name+" from "+where, func(t *testing.T) {
				var sp atomic.Pointer[gameserver.Server]
				got := make(chan error, 1)
				stop := func() { got <- tc.stop(sp.Load()) }
				addr, s, served := serveRaw(t, gameserver.Config{
					Logger:           slog.New(slog.DiscardHandler),
					DrainIdleTimeout: 50 * time.Millisecond, // the idle connection's grace
					Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if r.URL.Path == "/stop" {
							stop()
						}
						io.WriteString(w, "ok")
					}),
				})
				sp.Store(s)
				cl := dialServed(t, addr)

				switch where {
				case "handler":
					cl.writeAll("GET /stop HTTP/1.1\r\nHost: t\r\n\r\n")
				case "posted function":
					require.NoError(t, s.Post(stop))
				case "timer":
					s.AfterFunc(0, stop)
				}
				select {
				case err := <-got:
					assert.ErrorIs(t, err, gameserver.ErrLoopGoroutine)
				case <-time.After(ioTimeout):
					t.Fatalf("%s on the loop goroutine did not return", tc.name)
				}
				select {
				case err := <-served:
					assert.ErrorIs(t, err, gameserver.ErrServerClosed)
				case <-time.After(ioTimeout):
					t.Fatalf("Serve did not return after %s on the loop goroutine", tc.name)
				}
				rest := cl.readUntilEOF()
				switch {
				case where != "handler":
					assert.Empty(t, rest, "the idle connection is closed after DrainIdleTimeout")
				case tc.reply:
					resp := parseHead(t, rest)
					assert.Equal(t, http.StatusOK, resp.StatusCode, "the response in progress is finished")
					assert.True(t, strings.HasSuffix(rest, "\r\n\r\nok"), "with its body: %q", rest)
				}
				// (Close drops pending output: whether the response got
				// out before the loop stopped is not specified.)
				// From another goroutine, once stopped: nil at once.
				assert.NoError(t, s.Shutdown(context.Background()))
				assert.NoError(t, s.Close())
			})
		}
	}
}
