package loadtest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustServeLoopMetrics serves the loop's metrics in Prometheus's text
// format: a loop busy half the time since the server started; between the
// first and the second scrape, 100 lag observations (90 up to 1 ms, 9 up
// to 10 ms, 1 up to 100 ms), 7 slow requests, 1.25 s of worker-pool time
// and a longest turn of 12.5 ms.
func MustServeLoopMetrics(tb testing.TB) string {
	start := time.Now()
	var scrapes atomic.Int64
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		lag := [4]int{100, 100, 100, 100} // cumulative: le 0.001, 0.01, 0.1, +Inf
		slow, turn, work := 5, 0.002, 3.0
		if n > 1 {
			lag, slow, turn, work = [4]int{190, 199, 200, 200}, 12, 0.0125, 4.25
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# HELP gameserver_loop_busy_seconds_total Seconds the loop spent working.\n"+
			"# TYPE gameserver_loop_busy_seconds_total counter\ngameserver_loop_busy_seconds_total %g\n", time.Since(start).Seconds()/2)
		fmt.Fprintf(w, "# TYPE gameserver_loop_lag_seconds histogram\n"+
			"gameserver_loop_lag_seconds_bucket{le=\"0.001\"} %d\ngameserver_loop_lag_seconds_bucket{le=\"0.01\"} %d\n"+
			"gameserver_loop_lag_seconds_bucket{le=\"0.1\"} %d\ngameserver_loop_lag_seconds_bucket{le=\"+Inf\"} %d\n"+
			"gameserver_loop_lag_seconds_sum 0.5\ngameserver_loop_lag_seconds_count %d\n", lag[0], lag[1], lag[2], lag[3], lag[3])
		fmt.Fprintf(w, "# TYPE gameserver_loop_longest_turn_seconds gauge\ngameserver_loop_longest_turn_seconds %g\n", turn)
		fmt.Fprintf(w, "# TYPE gameserver_slow_requests_total counter\ngameserver_slow_requests_total{handler=\"hq\"} %d\n", slow)
		fmt.Fprintf(w, "# TYPE gameserver_work_seconds_total counter\ngameserver_work_seconds_total %g\n", work)
	})
}

func TestLoopMetrics(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	metrics := MustServeLoopMetrics(t)
	// Ensure -metrics scrapes the endpoint before and after the measured
	// run and reports the loop's figures for the run between.
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, KeepAlive: true, Concurrency: 2,
		TimeLimit: 500 * time.Millisecond, Warmup: 50 * time.Millisecond, MetricsURL: metrics + "/metrics"})
	require.NoError(t, err)
	l := res.Loop
	require.NotNil(t, l)
	assert.Empty(t, l.Error)
	assert.InDelta(t, 0.5, l.Utilization, 0.1)
	assert.Equal(t, 10*time.Millisecond, l.LagP99)
	assert.Equal(t, 100*time.Millisecond, l.LagMax)
	assert.Equal(t, 12500*time.Microsecond, l.LongestTurn)
	assert.EqualValues(t, 7, l.SlowRequests)
	assert.Equal(t, 1250*time.Millisecond, l.WorkTime)

	var b bytes.Buffer
	require.NoError(t, loadtest.WriteReport(&b, res))
	assert.Contains(t, b.String(), "Server loop during the run (from its metrics)")
	assert.Regexp(t, `/ +[456]\d\.\d% +10\.00 +100\.00 +12\.50 +7 +1250\.00\n`, b.String())

	// Ensure an endpoint that cannot be read is reported, not fatal.
	res, err = loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 2, MetricsURL: url + "/nothing-here"})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Contains(t, res.Loop.Error, "text format")
}

func TestLoopMetricsTurnHistogram(t *testing.T) {
	// Ensure a run that did not raise the all-time longest turn reports
	// its own longest turn from the turn-duration histogram: the upper
	// bound of the highest bucket that grew during it.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	var scrapes atomic.Int64
	metrics := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		counts := [4]int{10, 20, 25, 25} // cumulative: le 0.01, 0.025, 0.5, +Inf; one 0.3 s turn long ago
		if scrapes.Add(1) > 1 {
			counts = [4]int{60, 75, 80, 80} // this run: turns up to 25 ms
		}
		fmt.Fprintf(w, "# TYPE gameserver_loop_longest_turn_seconds gauge\ngameserver_loop_longest_turn_seconds 0.3\n")
		fmt.Fprintf(w, "# TYPE gameserver_loop_turn_seconds histogram\n"+
			"gameserver_loop_turn_seconds_bucket{le=\"0.01\"} %d\ngameserver_loop_turn_seconds_bucket{le=\"0.025\"} %d\n"+
			"gameserver_loop_turn_seconds_bucket{le=\"0.5\"} %d\ngameserver_loop_turn_seconds_bucket{le=\"+Inf\"} %d\n"+
			"gameserver_loop_turn_seconds_sum 1\ngameserver_loop_turn_seconds_count %d\n", counts[0], counts[1], counts[2], counts[3], counts[3])
	})
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, KeepAlive: true, Concurrency: 1,
		TimeLimit: 200 * time.Millisecond, MetricsURL: metrics + "/metrics"})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Equal(t, 25*time.Millisecond, res.Loop.LongestTurn)
}
