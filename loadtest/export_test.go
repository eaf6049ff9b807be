package loadtest

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// MustServeRaw listens on 127.0.0.1:0 and runs handle on each connection,
// for servers net/http will not imitate (resets, wrong lengths, canned
// bytes). It returns the URL; the server stops with the test.
func MustServeRaw(tb testing.TB, handle func(c net.Conn, r *bufio.Reader)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	var wg sync.WaitGroup
	tb.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				handle(c, bufio.NewReader(c))
			})
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// WithoutRawIO makes a run use net.Conn's Write and Read instead of the
// raw-socket path, so tests can check both.
func WithoutRawIO(c Config) Config {
	c.noRawIO = true
	return c
}

// WithLateWakeups makes an open-loop run send each request d after it is
// due, as a client whose timer wakes late would.
func WithLateWakeups(c Config, d time.Duration) Config {
	c.lateWakeups = d
	return c
}
