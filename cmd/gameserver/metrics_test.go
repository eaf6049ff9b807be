package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricsOn serves a stand-in metrics handler on loopback within lim and
// returns its address.
func metricsOn(t *testing.T, lim metricsLimits) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up 1\n") })
	t.Cleanup(serveMetricsOn(l, h, lim, slog.New(slog.DiscardHandler)))
	return l.Addr().String()
}

// scrape sends one GET /metrics on c and reads the response.
func scrape(c net.Conn, r *bufio.Reader) (*http.Response, error) {
	if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// closedWithin reports whether the server closes c within d (a read ends
// with EOF or a reset).
func closedWithin(c net.Conn, r *bufio.Reader, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := r.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func TestMetricsListenerTimeouts(t *testing.T) {
	// Ensure the metrics listener closes a connection that never finishes
	// its request (read timeout) and one left idle after a scrape (idle
	// timeout), and not before.
	lim := metricsLimits{read: 300 * time.Millisecond, write: time.Second, idle: 300 * time.Millisecond, maxConns: 4}
	addr := metricsOn(t, lim)

	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	io.WriteString(slow, "GET /metrics HTTP/1.1\r\nHost: x\r\n") // never ends its headers
	idle, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer idle.Close()
	ir := bufio.NewReader(idle)
	resp, err := scrape(idle, ir)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	assert.False(t, closedWithin(idle, ir, 100*time.Millisecond), "kept alive between scrapes")
	assert.True(t, closedWithin(slow, bufio.NewReader(slow), 10*time.Second), "a request never finished is closed (read timeout)")
	assert.True(t, closedWithin(idle, ir, 10*time.Second), "an idle connection is closed (idle timeout)")
}

func TestMetricsListenerCap(t *testing.T) {
	// Ensure the metrics listener serves at most maxConns connections at
	// once: one more waits, unserved, until one of them closes.
	lim := metricsLimits{read: 10 * time.Second, write: 10 * time.Second, idle: time.Minute, maxConns: 3}
	addr := metricsOn(t, lim)
	var held []net.Conn
	for i := range lim.maxConns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		resp, err := scrape(c, bufio.NewReader(c))
		require.NoError(t, err, "connection %d", i)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		held = append(held, c) // kept alive, idle
	}
	over, err := net.Dial("tcp", addr) // completes in the backlog: the kernel's, not the server's
	require.NoError(t, err)
	defer over.Close()
	got := make(chan error, 1)
	go func() {
		resp, err := scrape(over, bufio.NewReader(over))
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		got <- err
	}()
	select {
	case err := <-got:
		require.FailNow(t, "served over the cap", "err %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	select {
	case err := <-got:
		require.NoError(t, err, "served once a connection closed")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "never served after a connection closed")
	}
}
