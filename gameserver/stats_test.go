package gameserver_test

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spin holds the calling goroutine (the loop, in a handler) for d of CPU.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func TestStatsSpinningHandler(t *testing.T) {
	// Ensure a handler that holds the loop for 60 ms shows up as loop lag
	// of at least 50 ms, as the longest turn and in the slow-request log
	// (path redacted, query left out), and in the Logger.
	var logs testkit.LogBuffer
	mux := http.NewServeMux()
	mux.HandleFunc("/spin/", func(w http.ResponseWriter, r *http.Request) {
		spin(60 * time.Millisecond)
		w.Write([]byte("spun"))
	})
	mux.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("fast")) })
	addr, s := startServer(t, gameserver.Config{
		Handler:    mux,
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		RedactPath: func(p string) string { return strings.Replace(p, "secret", "X", 1) },
	})
	c := dial(t, addr)
	// Let the lag timer take a few quiet samples first.
	require.Eventually(t, func() bool { return s.Stats().Lag.Samples >= 3 }, ioTimeout, time.Millisecond)
	quiet := s.Stats()
	assert.Less(t, quiet.Lag.P50, 40*time.Millisecond, "an idle loop fires its lag timer about on time")

	resp, body := c.get("/fast")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "fast", body)
	assert.Empty(t, s.SlowRequests(), "a fast handler is not slow")

	resp, body = c.get("/spin/secret?tid=abc")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "spun", body)

	// The lag timer came due during the spin and fired once it ended.
	require.Eventually(t, func() bool { return s.Stats().Lag.Max >= 50*time.Millisecond }, ioTimeout, time.Millisecond)
	st := s.Stats()
	assert.GreaterOrEqual(t, st.LongestTurn, 60*time.Millisecond)
	assert.GreaterOrEqual(t, st.LongestTurnRecent, 60*time.Millisecond)
	assert.GreaterOrEqual(t, st.SlowTurns, uint64(1))
	assert.GreaterOrEqual(t, st.Lag.P99, st.Lag.P50)
	assert.LessOrEqual(t, st.Lag.P99, st.Lag.Max)

	slow := s.SlowRequests()
	require.Len(t, slow, 1)
	assert.Equal(t, uint64(1), st.SlowRequests)
	e := slow[0]
	assert.Equal(t, "handler", e.Phase)
	assert.Equal(t, http.MethodGet, e.Method)
	assert.Equal(t, "/spin/X", e.Path)
	assert.GreaterOrEqual(t, e.Duration, 60*time.Millisecond)
	assert.Equal(t, 1, e.Conns)
	assert.WithinDuration(t, time.Now(), e.Time, ioTimeout)
	assert.Contains(t, logs.String(), "slow request")
	assert.Contains(t, logs.String(), "path=/spin/X")
	assert.NotContains(t, logs.String(), "abc")
}

func TestSlowRequestOff(t *testing.T) {
	// Ensure a negative SlowRequest logs nothing, however slow.
	addr, s := startServer(t, gameserver.Config{
		SlowRequest: -1,
		Handler:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { spin(20 * time.Millisecond) }),
	})
	resp, _ := dial(t, addr).get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, s.SlowRequests())
	assert.Zero(t, s.Stats().SlowRequests)
}

func TestUtilization(t *testing.T) {
	// Ensure utilization is near 0 while the loop waits and near 1 while a
	// handler keeps it spinning.
	addr, s := startServer(t, gameserver.Config{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { spin(20 * time.Millisecond) }),
	})
	c := dial(t, addr)
	c.get("/") // the connection is served once before measuring

	before := s.Stats()
	time.Sleep(300 * time.Millisecond)
	idle := s.Stats()
	assert.Less(t, idle.Utilization(before), 0.2, "idle")
	assert.InDelta(t, 300*time.Millisecond, idle.LoopElapsed-before.LoopElapsed, float64(200*time.Millisecond))

	// Keep the loop busy: 20 requests of 20 ms, pipelined, 400 ms in all.
	const n = 20
	var reqs strings.Builder
	for range n {
		reqs.WriteString("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	}
	start := s.Stats()
	c.writeAll(reqs.String())
	for range n {
		resp, _ := c.readResponse(http.MethodGet)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	busy := s.Stats()
	assert.Greater(t, busy.Utilization(start), 0.8, "spinning")
	assert.LessOrEqual(t, busy.Utilization(start), 1.0)
	assert.Greater(t, busy.Utilization(gameserver.Stats{}), 0.0, "since start")
}

func TestStatsTurnHistogram(t *testing.T) {
	// Ensure every loop turn is counted in the turn-duration histogram,
	// and a 60 ms turn lands in the buckets above 50 ms.
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/spin" {
			spin(60 * time.Millisecond)
		}
	})})
	cl := dial(t, addr)
	cl.writeAll("GET /spin HTTP/1.1\r\nHost: test\r\n\r\n")
	cl.readRaw(http.MethodGet)
	var st gameserver.Stats
	eventually(t, func() bool {
		st = s.Stats()
		return st.Turns.Samples > 0 && st.Turns.Max >= 60*time.Millisecond
	}, "the 60 ms turn in the histogram")
	at50 := slices.Index(gameserver.LagBuckets[:], 50*time.Millisecond)
	require.GreaterOrEqual(t, at50, 0)
	last := len(gameserver.LagBuckets) - 1
	assert.Greater(t, st.Turns.Counts[last], st.Turns.Counts[at50], "a turn over 50 ms")
	assert.LessOrEqual(t, st.Turns.Samples, st.LoopTurns+1, "at most one sample per turn")
}
