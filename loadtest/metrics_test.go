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
// to 10 ms, 1 up to 100 ms) but no new all-time maximum lag (200 ms, long
// ago), 7 slow requests, 1.25 s of worker-pool time, 0.5 s of process CPU
// and a longest turn of 12.5 ms, a new all-time record.
func MustServeLoopMetrics(tb testing.TB) string {
	start := time.Now()
	var scrapes atomic.Int64
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		lag := [4]int{100, 100, 100, 100} // cumulative: le 0.001, 0.01, 0.1, +Inf
		slow, turn, work, cpu := 5, 0.002, 3.0, 10.0
		if n > 1 {
			lag, slow, turn, work, cpu = [4]int{190, 199, 200, 200}, 12, 0.0125, 4.25, 10.5
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
		fmt.Fprintf(w, "# TYPE gameserver_loop_lag_max_seconds gauge\ngameserver_loop_lag_max_seconds 0.2\n")
		fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", cpu)
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
	assert.Equal(t, 100*time.Millisecond, l.LagMax, "the highest lag bucket that grew")
	assert.True(t, l.LagMaxBound, "the run did not raise the all-time maximum: its own is only bounded")
	assert.Equal(t, 12500*time.Microsecond, l.LongestTurn)
	assert.False(t, l.LongestTurnBound, "the run set the record: exact")
	assert.EqualValues(t, 7, l.SlowRequests)
	assert.Equal(t, 1250*time.Millisecond, l.WorkTime)
	assert.Equal(t, 500*time.Millisecond, l.CPU)
	assert.Equal(t, l.CPU/time.Duration(res.CompleteRequests), res.ServerCPUPerRequest())

	var b bytes.Buffer
	b.WriteString(loadtest.Text(t, res))
	assert.Contains(t, b.String(), "Server loop during the run (from its metrics)")
	// The CPU per request is 500 ms over however many requests the run made:
	// us on a quiet machine, ms on a busy one.
	assert.Regexp(t, `/ +[456]\d\.\d% +~10\.00 +<= 100\.00 +12\.50 +7 +1250\.00 +[\d.]+ (us|ms)\n`, b.String())
	assert.Contains(t, b.String(), "<= a bucket's upper bound")

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
	assert.True(t, res.Loop.LongestTurnBound, "a bucket's bound, not a measurement")
}

func TestLoopMetricsLagMax(t *testing.T) {
	// Ensure a run that raised the server's all-time maximum lag reports
	// it exactly, not the bucket's bound.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	var scrapes atomic.Int64
	metrics := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		lagMax, counts := 0.003, [3]int{10, 10, 10} // cumulative: le 0.005, 0.05, +Inf
		if scrapes.Add(1) > 1 {
			lagMax, counts = 0.0213, [3]int{30, 31, 31}
		}
		fmt.Fprintf(w, "# TYPE gameserver_loop_lag_max_seconds gauge\ngameserver_loop_lag_max_seconds %g\n", lagMax)
		fmt.Fprintf(w, "# TYPE gameserver_loop_lag_seconds histogram\n"+
			"gameserver_loop_lag_seconds_bucket{le=\"0.005\"} %d\ngameserver_loop_lag_seconds_bucket{le=\"0.05\"} %d\n"+
			"gameserver_loop_lag_seconds_bucket{le=\"+Inf\"} %d\ngameserver_loop_lag_seconds_sum 1\ngameserver_loop_lag_seconds_count %d\n",
			counts[0], counts[1], counts[2], counts[2])
	})
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 5, MetricsURL: metrics + "/metrics"})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Equal(t, 21300*time.Microsecond, res.Loop.LagMax)
	assert.False(t, res.Loop.LagMaxBound)
	assert.Zero(t, res.ServerCPUPerRequest(), "no process CPU exported")
}
