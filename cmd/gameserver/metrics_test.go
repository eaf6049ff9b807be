package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricsOn serves a stand-in metrics handler on loopback within lim and
// returns its address.
func metricsOn(t *testing.T, lim metricsLimits) string {
	t.Helper()
	return metricsWith(t, lim, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up 1\n") }))
}

// metricsWith serves h as the metrics handler on loopback within lim and
// returns its address.
func metricsWith(t *testing.T, lim metricsLimits, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
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

// scrapeAsync scrapes on a new connection to addr, reporting its error (or
// a status other than 200) on the channel.
func scrapeAsync(t *testing.T, addr string) <-chan error {
	t.Helper()
	c, err := net.Dial("tcp", addr) // completes in the backlog: the kernel's, not the server's
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	got := make(chan error, 1)
	go func() {
		resp, err := scrape(c, bufio.NewReader(c))
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		got <- err
	}()
	return got
}

func TestMetricsListenerCap(t *testing.T) {
	// Ensure the metrics listener serves at most maxConns connections at
	// once: while each serves a scrape, one more waits, unserved, until
	// one of them ends.
	lim := metricsLimits{read: 10 * time.Second, write: 10 * time.Second, idle: time.Minute, maxConns: 3}
	release, entered := make(chan struct{}), make(chan struct{}, 8)
	var once sync.Once
	addr := metricsWith(t, lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		io.WriteString(w, "up 1\n")
	}))
	var busy []<-chan error
	for range lim.maxConns {
		busy = append(busy, scrapeAsync(t, addr))
		<-entered
	}
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	over := scrapeAsync(t, addr)
	select {
	case <-entered:
		require.FailNow(t, "served over the cap while every slot served a scrape")
	case <-time.After(300 * time.Millisecond):
	}
	once.Do(func() { close(release) })
	for i, got := range append(busy, over) {
		select {
		case err := <-got:
			require.NoError(t, err, "scrape %d", i)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "a scrape was never served", "scrape %d", i)
		}
	}
}

func TestMetricsListenerEvictsWaiting(t *testing.T) {
	// Ensure a scrape at the cap is served at once, not after the read or
	// idle timeout, when the slots are held by connections without a
	// request under way (silent, or idle after a scrape): the one waiting
	// longest is closed to make room, the next one after it.
	lim := metricsLimits{read: 10 * time.Second, write: 10 * time.Second, idle: time.Minute, maxConns: 3}
	addr := metricsOn(t, lim)
	var held []net.Conn
	for i := range lim.maxConns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		if i == lim.maxConns-1 { // the newest scrapes, then idles
			resp, err := scrape(c, bufio.NewReader(c))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		held = append(held, c)
		time.Sleep(10 * time.Millisecond) // accepted in this order
	}
	for i := range 2 {
		select {
		case err := <-scrapeAsync(t, addr):
			require.NoError(t, err, "scrape %d over the cap", i)
		case <-time.After(5 * time.Second):
			require.FailNow(t, "a scrape over the cap waited for a timeout", "scrape %d", i)
		}
		assert.True(t, closedWithin(held[i], bufio.NewReader(held[i]), 5*time.Second), "the connection waiting longest, %d, was not closed", i)
	}
	assert.False(t, closedWithin(held[2], bufio.NewReader(held[2]), 100*time.Millisecond), "the idle one closed before the older silent ones")
}

func TestMetricsListenerPace(t *testing.T) {
	// Ensure the metrics listener takes new connections at its pace, the
	// first maxConns at once: 24 scrapes on new connections at 40 a
	// second, 4 at once, take at least half a second (they would take
	// milliseconds), and every one is served.
	lim := metricsLimits{read: 10 * time.Second, write: 10 * time.Second, idle: time.Minute, maxConns: 4, accepts: 40}
	addr := metricsOn(t, lim)
	start := time.Now()
	for i := range 24 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		resp, err := scrape(c, bufio.NewReader(c))
		require.NoError(t, err, "scrape %d", i)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		c.Close()
	}
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "20 connections past the first 4, at 40 a second")
}

func TestSharedScrape(t *testing.T) {
	// Ensure scrapes within fresh of a gather share it, those arriving
	// while it runs included, each form of answer (text, OpenMetrics) its
	// own, with the gatherer's header; and a scrape after fresh gathers
	// anew.
	var gathers atomic.Int32
	release := make(chan struct{})
	h := newSharedScrape(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := gathers.Add(1)
		<-release
		w.Header().Set("Content-Type", r.Header.Get("Accept"))
		fmt.Fprintf(w, "gather %d\n", n)
	}), 500*time.Millisecond, 0, 0)
	get := func(accept string) (string, string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept", accept)
		h.ServeHTTP(rec, req)
		return rec.Header().Get("Content-Type"), rec.Body.String()
	}
	const text = "text/plain"
	var wg sync.WaitGroup
	bodies := make(chan string, 10)
	for range 10 {
		wg.Go(func() { _, body := get(text); bodies <- body })
	}
	eventually := func(cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, 10*time.Second, time.Millisecond)
	}
	eventually(func() bool { return gathers.Load() == 1 })
	close(release)
	wg.Wait()
	close(bodies)
	for body := range bodies {
		assert.Equal(t, "gather 1\n", body, "scrapes during the gather share it")
	}
	ct, body := get("application/openmetrics-text; version=1.0.0")
	assert.Equal(t, "gather 2\n", body, "another form: a gather of its own")
	assert.Contains(t, ct, "openmetrics")
	_, body = get(text)
	assert.Equal(t, "gather 1\n", body, "within fresh")
	time.Sleep(600 * time.Millisecond)
	_, body = get(text)
	assert.Equal(t, "gather 3\n", body, "after fresh, a gather")
}

func TestMetricsScrapePace(t *testing.T) {
	// Ensure scrapes are answered at their pace, the first burst at once,
	// over one kept-alive connection too: 24 scrapes at 40 a second, 4 at
	// once, take at least half a second.
	lim := metricsLimits{read: 10 * time.Second, write: 10 * time.Second, idle: time.Minute, maxConns: 4, scrapes: 40}
	addr := metricsOn(t, lim)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	start := time.Now()
	for i := range 24 {
		resp, err := scrape(c, r)
		require.NoError(t, err, "scrape %d", i)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "20 scrapes past the first 4, at 40 a second")
}
