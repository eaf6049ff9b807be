package loadtest

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metric names loadtest reads from a server's Prometheus endpoint
// (Config.MetricsURL), in Prometheus's text exposition format: those the
// State Secrets server exports for its event loop, and client_golang's
// process CPU. A server exports those it has; the figures of the others
// stay zero. loadtest/README.md lists them.
const (
	// metricLoopBusy is a counter of the seconds the server's event loop
	// spent working (not waiting in epoll_wait); utilization over a run is
	// its increase over the run's time.
	metricLoopBusy = "gameserver_loop_busy_seconds_total"
	// metricLoopLag is a histogram of loop lag in seconds: how long a ready
	// connection or a due timer waited for the loop to get to it.
	metricLoopLag = "gameserver_loop_lag_seconds"
	// metricLongestTurn is a gauge, the longest single loop turn in seconds
	// since the server started: when a run raises it, its value after the
	// run is the run's longest turn.
	metricLongestTurn = "gameserver_loop_longest_turn_seconds"
	// metricLoopTurns is a histogram of loop turn durations in seconds:
	// when a run did not raise metricLongestTurn, its longest turn is at
	// most the upper bound of the highest bucket that grew.
	metricLoopTurns = "gameserver_loop_turn_seconds"
	// metricSlowRequests is a counter of requests whose handler the server
	// counted as slow.
	metricSlowRequests = "gameserver_slow_requests_total"
	// metricWorkTime is a counter of the seconds the server's worker pool
	// spent running work handed off the loop (a login's password hash).
	metricWorkTime = "gameserver_work_seconds_total"
	// metricLoopLagMax is a gauge, the latest the loop-lag timer ever fired
	// in seconds: when a run raises it, its value after the run is the
	// run's exact maximum lag.
	metricLoopLagMax = "gameserver_loop_lag_max_seconds"
	// metricProcessCPU is a counter of the CPU time, user and system, the
	// server process has used, in seconds (client_golang's process
	// collector, from /proc/PID/stat, in clock ticks of 10 ms): its
	// increase over a run over the run's requests is the server's CPU per
	// request, which a busy machine inflates far less than it swings
	// requests per second.
	metricProcessCPU = "process_cpu_seconds_total"
	// metricRequests is a counter of the requests the server answered:
	// its increase over a window is the server's request rate (RunUsers).
	metricRequests = "gameserver_requests_total"
	// metricLongestTurnRecent is a gauge, the loop's longest turn of the
	// last 10 to 20 seconds: a window's longest turn (RunUsers).
	metricLongestTurnRecent = "gameserver_loop_longest_turn_recent_seconds"
)

// metricsTimeout bounds one scrape.
const metricsTimeout = 5 * time.Second

// snapshot is one scrape of the loop's metrics.
type snapshot struct {
	at            time.Time
	busy          float64            // metricLoopBusy, NaN when absent
	lag           map[float64]uint64 // metricLoopLag: cumulative count by upper bound
	turns         map[float64]uint64 // metricLoopTurns, the same way
	longestTurn   float64            // seconds, NaN when absent
	slowRequests  float64            // NaN when absent
	workTime      float64            // seconds, NaN when absent
	lagMax        float64            // metricLoopLagMax, seconds, NaN when absent
	cpu           float64            // metricProcessCPU, seconds, NaN when absent
	requests      float64            // metricRequests, NaN when absent
	longestRecent float64            // metricLongestTurnRecent, seconds, NaN when absent
	wait          *waitSnapshot      // the wait attribution's families, nil when absent
}

// scrape reads the loop's metrics from url.
func scrape(ctx context.Context, url string) (*snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	sent := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	// The server read its counters some time between the request and the
	// response: take the middle.
	s := &snapshot{at: sent.Add(time.Since(sent) / 2), busy: sumOf(families[metricLoopBusy]),
		longestTurn: maxOf(families[metricLongestTurn]), slowRequests: sumOf(families[metricSlowRequests]),
		workTime: sumOf(families[metricWorkTime]), lagMax: maxOf(families[metricLoopLagMax]),
		cpu: sumOf(families[metricProcessCPU]), requests: sumOf(families[metricRequests]),
		longestRecent: maxOf(families[metricLongestTurnRecent])}
	s.lag, s.turns = buckets(families[metricLoopLag]), buckets(families[metricLoopTurns])
	s.wait = scrapeWait(families)
	return s, nil
}

// buckets is a histogram family's cumulative counts by upper bound, +Inf
// included, its series added up; nil without it.
func buckets(f *dto.MetricFamily) map[float64]uint64 {
	if f == nil {
		return nil
	}
	out := map[float64]uint64{}
	for _, m := range f.GetMetric() {
		inf := false
		for _, b := range m.GetHistogram().GetBucket() {
			out[b.GetUpperBound()] += b.GetCumulativeCount()
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
		}
		if !inf {
			out[math.Inf(1)] += m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

// value is a counter's, gauge's or untyped metric's value.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// sumOf adds up a family's series (all label sets); NaN without it.
func sumOf(f *dto.MetricFamily) float64 {
	if f == nil || len(f.GetMetric()) == 0 {
		return math.NaN()
	}
	var v float64
	for _, m := range f.GetMetric() {
		v += value(m)
	}
	return v
}

// maxOf is the largest of a family's series; NaN without it.
func maxOf(f *dto.MetricFamily) float64 {
	if f == nil || len(f.GetMetric()) == 0 {
		return math.NaN()
	}
	v := math.Inf(-1)
	for _, m := range f.GetMetric() {
		v = max(v, value(m))
	}
	return v
}

// loopBetween computes a run's loop figures from the scrapes before and
// after it.
func loopBetween(before, after *snapshot) *LoopFigures {
	l := &LoopFigures{}
	elapsed := after.at.Sub(before.at).Seconds()
	if !math.IsNaN(after.busy) && !math.IsNaN(before.busy) && elapsed > 0 {
		l.Utilization = min(max((after.busy-before.busy)/elapsed, 0), 1)
	}
	_, turnTop, turnOpen := lagFigures(before.turns, after.turns)
	l.LongestTurn, l.LongestTurnBound = runMax(before.longestTurn, after.longestTurn, turnTop, after.turns != nil && !turnOpen)
	var lagTop time.Duration
	var lagOpen bool
	l.LagP99, lagTop, lagOpen = lagFigures(before.lag, after.lag)
	l.LagMax, l.LagMaxBound = runMax(before.lagMax, after.lagMax, lagTop, after.lag != nil && !lagOpen)
	if !math.IsNaN(after.slowRequests) && !math.IsNaN(before.slowRequests) {
		l.SlowRequests = int64(after.slowRequests - before.slowRequests)
	}
	if !math.IsNaN(after.workTime) && !math.IsNaN(before.workTime) {
		l.WorkTime = seconds(max(after.workTime-before.workTime, 0))
	}
	if !math.IsNaN(after.cpu) && !math.IsNaN(before.cpu) {
		l.CPU = seconds(max(after.cpu-before.cpu, 0))
	}
	if !math.IsNaN(after.requests) && !math.IsNaN(before.requests) {
		l.Requests = int64(max(after.requests-before.requests, 0))
	}
	l.Wait = waitBetween(before.wait, after.wait)
	return l
}

// runMax is a run's largest value of something the server keeps the
// all-time maximum of (a gauge read before and after the run, NaN when not
// exported) and a histogram of (top: the upper bound of the highest bucket
// that grew during the run; hist: the histogram was exported and that
// bucket has a finite upper bound). When the
// run raised the maximum, its value after the run is the run's, exactly.
// Otherwise the run's maximum is only bounded, by the bucket's bound and by
// the all-time maximum, and bound is true.
func runMax(before, after float64, top time.Duration, hist bool) (d time.Duration, bound bool) {
	switch {
	case !math.IsNaN(after) && !math.IsNaN(before) && after > before:
		return seconds(after), false
	case hist && !math.IsNaN(after):
		return min(top, seconds(after)), true
	case hist:
		return top, true
	case !math.IsNaN(after):
		return seconds(after), true
	}
	return 0, false
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// lagFigures are the 99th percentile of the lag histogram's increase
// between two scrapes, interpolated linearly within its bucket as
// Prometheus's histogram_quantile does, and the upper bound of the highest
// bucket that grew (its lower bound, open true, when that is +Inf).
func lagFigures(before, after map[float64]uint64) (p99, top time.Duration, open bool) {
	return quantileFigures(before, after, 0.99)
}

// quantileFigures are lagFigures for the q quantile (0 to 1) of any
// histogram's increase.
func quantileFigures(before, after map[float64]uint64, q float64) (p, top time.Duration, open bool) {
	if after == nil {
		return 0, 0, false
	}
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	delta := make([]float64, len(bounds)) // cumulative increase by bound
	for i, b := range bounds {
		delta[i] = float64(after[b]) - float64(before[b])
	}
	total := delta[len(delta)-1]
	if total <= 0 {
		return 0, 0, false
	}
	rank := q * total * (1 - 1e-9) // 0.99 * 100 is 99.00000000000001
	lower, below := 0.0, 0.0
	for i, b := range bounds {
		if delta[i] >= rank {
			if math.IsInf(b, 1) {
				p = seconds(lower)
			} else {
				p = seconds(lower + (b-lower)*(rank-below)/max(delta[i]-below, 1))
			}
			break
		}
		lower, below = b, delta[i]
	}
	for i := len(bounds) - 1; i >= 0; i-- {
		prev := 0.0
		if i > 0 {
			prev = delta[i-1]
		}
		if delta[i] > prev {
			top = seconds(bounds[i])
			if open = math.IsInf(bounds[i], 1); open {
				top = 0
				if i > 0 {
					top = seconds(bounds[i-1])
				}
			}
			break
		}
	}
	return p, top, open
}
