package handlers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// serveStats serves e's handlers from a gameserver loop (whatever the
// -engine: the figures are the loop's), polling the live hub every 10 ms,
// and returns its address and the server, for its Stats.
func serveStats(tb testing.TB, e *env) (string, *gameserver.Server) {
	tb.Helper()
	return serveGameserver(tb, e.srv, func() { e.srv.PollLive(context.Background()) }, gameserver.Config{})
}

// resumeStorm has conns raw connections reopen target's event stream
// with Last-Event-ID lastID again and again for d, and on until the
// server has answered minAnswers opens (a busy machine answers fewer in
// d) or a minute has passed, each reading what the server sends until
// its first whole message (a hello or a refusal's retry; at most 2 s)
// before it hangs up, at most once per 100 ms per connection, and returns
// how many opens the server let through (a hello) and refused.
func resumeStorm(tb testing.TB, addr, target, lastID string, conns int, d time.Duration, minAnswers int64) (opened, refused int64) {
	var wg sync.WaitGroup
	var nOpened, nRefused atomic.Int64
	end, limit := time.Now().Add(d), time.Now().Add(time.Minute)
	going := func() bool {
		return time.Now().Before(end) || nOpened.Load()+nRefused.Load() < minAnswers && time.Now().Before(limit)
	}
	req := "GET " + target + " HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\nLast-Event-ID: " + lastID + "\r\n\r\n"
	for range conns {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for going() {
				opened := time.Now()
				c, err := net.Dial("tcp", addr)
				if err != nil {
					tb.Errorf("dial: %v", err)
					return
				}
				c.Write([]byte(req))
				// Hang up as soon as the answer is known; the deadline is
				// generous because on a loaded machine a replay can take
				// more than 100 ms to arrive (CI saw 130 ms).
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				var got []byte
				for {
					n, err := c.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil || strings.Contains(string(got), "\n\n") { // the first message
						break
					}
				}
				c.Close()
				time.Sleep(time.Until(opened.Add(100 * time.Millisecond))) // at most 10 opens/s each
				switch s := string(got); {
				case strings.Contains(s, "event: hello"):
					nOpened.Add(1)
				case strings.Contains(s, "retry: "):
					nRefused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return nOpened.Load(), nRefused.Load()
}

// rawProbe fetches / on one keep-alive raw connection until stop closes,
// and returns each request's latency.
func rawProbe(tb testing.TB, addr string, stop <-chan struct{}) []time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Errorf("probe: %v", err)
		return nil
	}
	defer c.Close()
	r := bufio.NewReader(c)
	var lat []time.Duration
	for {
		select {
		case <-stop:
			return lat
		default:
		}
		start := time.Now()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(r, nil)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err != nil {
			tb.Errorf("probe: %v", err)
			return lat
		}
		lat = append(lat, time.Since(start))
		time.Sleep(2 * time.Millisecond)
	}
}

func TestLiveResumeStorm(t *testing.T) {
	// Ensure one session cannot freeze the loop by reopening its stream:
	// 20 raw connections of one session on one address, each reopening
	// /game/events with Last-Event-ID 190 changes behind, for 3 s (and on
	// until 40 opens were answered), while a probe fetches a static page
	// on its own connection. The opens past the session's token bucket
	// are refused at once (no more let in than the bucket allows), and
	// those let in read what they missed in a few queries: the loop
	// spends under 90% of the storm on a CPU, and the probe's p99 stays
	// under 500 ms. On main before this, every open was let in, the loop
	// was 100% busy and the probe's p99 11.4 s.
	//
	// The loop's time on a CPU is its thread's CPU time: the wall time of
	// its turns grows while a busy machine keeps the thread off the CPU
	// (with three busy loops beside the test, turns took 98% of the storm
	// and the loop was on a CPU for 6% of it, the probe's p99 4.8 s).
	// When the machine held the loop off for over a quarter of the storm,
	// the probe's wall-clock latency is the machine's and is only logged.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	addr, srv := serveStats(t, e)
	hello := changesBehind(t, e, 95)

	before, cpuBefore, start := srv.Stats(), loopCPU(t, srv), time.Now()
	stop := make(chan struct{})
	probed := make(chan []time.Duration)
	go func() { probed <- rawProbe(t, addr, stop) }()
	go runClock(e.clock, stop) // the token buckets refill
	opened, refused := resumeStorm(t, addr, "/game/events?tid="+tid, fmt.Sprint(hello), 20, 3*time.Second, 40)
	close(stop)
	lat := <-probed
	after, cpuAfter, wall := srv.Stats(), loopCPU(t, srv), time.Since(start)

	require.NotEmpty(t, lat)
	p50, p99 := testkit.Quantile(lat, 0.5), testkit.Quantile(lat, 0.99)
	busy := float64(after.LoopBusy-before.LoopBusy) / float64(wall)
	onCPU := float64(cpuAfter-cpuBefore) / float64(wall)
	t.Logf("storm of %v: %d opens let in, %d refused; probe: %d requests, p50 %v, p99 %v; loop busy %.1f%%, on a CPU %.1f%%, longest turn %v",
		wall.Round(time.Millisecond), opened, refused, len(lat), p50, p99, 100*busy, 100*onCPU, after.LongestTurn)
	assert.Positive(t, opened, "the storm's first opens get their replay")
	assert.Positive(t, refused, "the rest are refused")
	allowed := handlers.LiveOpenBurstSession + int64(wall/handlers.LiveOpenRefillSession) + 1
	assert.LessOrEqual(t, opened, allowed, "opens let in beyond the session's bucket")
	if cpuAfter == 0 { // no thread CPU clock: the wall time of the loop's turns
		onCPU = busy
	}
	assert.Less(t, onCPU, 0.9, "the storm holds the loop")
	// Generous (a quiet machine: p99 1-6 ms, 6-12% busy; under a loaded
	// make test: up to 97 ms, 74%); before the fix, 11.4 s and 100%.
	if busy-onCPU < 0.25 {
		assert.Less(t, p99, 500*time.Millisecond, "the probe waited behind the storm")
	} else {
		t.Logf("the machine held the loop off the CPU for %.0f%% of the storm: the probe's p99 is not checked", 100*(busy-onCPU))
	}
}

// changesBehind enlists n players, each a news line and a standing the
// first player sees (2n changes), and returns the change log's cursor
// from before them.
func changesBehind(t *testing.T, e *env, n int) int64 {
	t.Helper()
	hello, err := e.store.LastChange(t.Context())
	require.NoError(t, err)
	for i := range n {
		_, err := e.store.Register(t.Context(), fmt.Sprintf("agent%03d", i), "password-x", game.MIB)
		require.NoError(t, err)
	}
	changes, _, err := e.store.ChangesFor(t.Context(), 1, hello, 500)
	require.NoError(t, err)
	require.Len(t, changes, 2*n, "changes behind")
	return hello
}

// loopCPU returns the CPU time srv's loop thread has used (read on the
// loop), 0 where the system cannot tell.
func loopCPU(t *testing.T, srv *gameserver.Server) time.Duration {
	t.Helper()
	got := make(chan time.Duration, 1)
	require.NoError(t, srv.Post(func() {
		d, _ := testkit.ThreadCPUTime()
		got <- d
	}))
	return <-got
}

// runClock moves the test clock on with the wall clock, every 10 ms, until
// stop closes.
func runClock(c *testkit.Clock, stop <-chan struct{}) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			c.Add(10 * time.Millisecond)
		}
	}
}
