package gameserver_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
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

// A handler, timer or posted function that calls runtime.Goexit ends the
// loop goroutine; the server notices, logs it, closes every connection and
// stops, and Serve says why.
func TestGoexitStopsServer(t *testing.T) {
	for _, where := range []string{"handler", "posted function", "timer"} {
		t.Run(where, func(t *testing.T) {
			var logs syncBuffer
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
			idle := dial(t, addr)
			resp, body := idle.get("/")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "ok", body)

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
