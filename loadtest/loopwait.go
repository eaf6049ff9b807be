package loadtest

import (
	"math"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The metrics of a server loop that attributes each request's wait
// (LoopWait), read when the server exports them.
const (
	// metricHeadOfLine, metricCPUWait and metricHandler are histograms in
	// seconds by label route: of each attributed request's wait between
	// the loop learning it was ready and its handler's start, the time the
	// loop ran other work (head-of-line blocking) and the time its thread
	// waited for a CPU; and the handler's own time.
	metricHeadOfLine = "gameserver_request_head_of_line_seconds"
	metricCPUWait    = "gameserver_request_cpu_wait_seconds"
	metricHandler    = "gameserver_request_handler_seconds"
	// metricLoopCPU and metricLoopCPUWait are counters in seconds: the
	// time the loop's thread ran on a CPU and the time it was runnable but
	// waiting for one.
	metricLoopCPU     = "gameserver_loop_cpu_seconds_total"
	metricLoopCPUWait = "gameserver_loop_cpu_wait_seconds_total"
)

// LoopWait is a server loop's own account, over one run, of why its
// requests waited for their handlers, which no client can see from
// outside: of the time from when the loop learned a request was ready to
// its handler's start, how much the loop ran other connections' work
// (head-of-line blocking: the server's doing) and how much the loop's
// thread waited for a CPU (the machine's doing), with the handlers' own
// time. It is the increase over the run of the histograms
// gameserver_request_head_of_line_seconds, gameserver_request_cpu_wait_seconds
// and gameserver_request_handler_seconds (by route) and of the counters
// gameserver_loop_cpu_seconds_total and gameserver_loop_cpu_wait_seconds_total;
// LoopFigures.Wait is nil when the server exports none of them (an engine
// with no loop, a platform without per-thread figures: unknown, not zero).
type LoopWait struct {
	// LoopCPU is the time the loop's thread ran on a CPU during the run,
	// LoopCPUWait the time it was runnable but waiting for one.
	LoopCPU, LoopCPUWait time.Duration
	// Routes are the figures of each route the server labels them with
	// (its ServeMux pattern, "GET /{$}"), sorted by route, the routes
	// that served no attributed request during the run left out.
	Routes []RouteWait
}

// RouteWait is one route's attributed requests over a run (see LoopWait).
type RouteWait struct {
	Route string
	// Requests is how many of the route's requests were attributed (the
	// server may sample its loop's turns): the sample count of every
	// summary below.
	Requests int64
	// HeadOfLine is their wait behind other work on the loop, CPUWait
	// their wait for a CPU, Handler their handlers' own (wall) time.
	HeadOfLine, CPUWait, Handler WaitSummary
}

// WaitSummary summarizes one of a route's wait histograms over a run.
// Mean is exact (the histogram's sum over its count); P50 and P99 are
// interpolated within their bucket as Prometheus's histogram_quantile
// does (estimates, worth little from under 100 requests), and Max is the
// upper bound of the highest bucket that grew (a bound, not a
// measurement; its lower bound when that bucket is +Inf).
type WaitSummary struct {
	Mean, P50, P99, Max time.Duration
}

// cpuWaitShare is the share, 0 to 1, of the time the loop's thread
// wanted to run during the run that it waited for a CPU; ok is false
// when it did not run.
func (w *LoopWait) cpuWaitShare() (share float64, ok bool) {
	if w == nil || w.LoopCPU+w.LoopCPUWait <= 0 {
		return 0, false
	}
	return float64(w.LoopCPUWait) / float64(w.LoopCPU+w.LoopCPUWait), true
}

// histogram is one series of a Prometheus histogram: its cumulative
// counts by upper bound (+Inf included), sum and count.
type promHistogram struct {
	buckets map[float64]uint64
	sum     float64
	count   uint64
}

// waitSnapshot is one scrape's wait families: per route, the three
// histograms; nil when the server exports none.
type waitSnapshot struct {
	loopCPU, loopCPUWait float64 // seconds, NaN when absent
	routes               map[string]*[3]promHistogram
}

// scrapeWait reads the wait families of one scrape, nil without them.
func scrapeWait(families map[string]*dto.MetricFamily) *waitSnapshot {
	s := &waitSnapshot{loopCPU: sumOf(families[metricLoopCPU]), loopCPUWait: sumOf(families[metricLoopCPUWait]),
		routes: map[string]*[3]promHistogram{}}
	for i, name := range [3]string{metricHeadOfLine, metricCPUWait, metricHandler} {
		for _, m := range families[name].GetMetric() {
			route := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" {
					route = l.GetValue()
				}
			}
			hs := s.routes[route]
			if hs == nil {
				hs = new([3]promHistogram)
				s.routes[route] = hs
			}
			hs[i] = promHistogram{buckets: buckets(&dto.MetricFamily{Metric: []*dto.Metric{m}}),
				sum: m.GetHistogram().GetSampleSum(), count: m.GetHistogram().GetSampleCount()}
		}
	}
	if math.IsNaN(s.loopCPU) && len(s.routes) == 0 {
		return nil
	}
	return s
}

// waitBetween is the run's LoopWait from the scrapes before and after it.
func waitBetween(before, after *waitSnapshot) *LoopWait {
	if before == nil || after == nil {
		return nil
	}
	w := &LoopWait{}
	if !math.IsNaN(after.loopCPU) && !math.IsNaN(before.loopCPU) {
		w.LoopCPU = seconds(max(after.loopCPU-before.loopCPU, 0))
		w.LoopCPUWait = seconds(max(after.loopCPUWait-before.loopCPUWait, 0))
	}
	for route, a := range after.routes {
		var b [3]promHistogram
		if p := before.routes[route]; p != nil {
			b = *p
		}
		n := int64(a[0].count) - int64(b[0].count)
		if n <= 0 {
			continue
		}
		rw := RouteWait{Route: route, Requests: n}
		for i, s := range [3]*WaitSummary{&rw.HeadOfLine, &rw.CPUWait, &rw.Handler} {
			*s = summarize(b[i], a[i])
		}
		w.Routes = append(w.Routes, rw)
	}
	sort.Slice(w.Routes, func(i, j int) bool { return w.Routes[i].Route < w.Routes[j].Route })
	return w
}

// summarize is a histogram's increase between two scrapes as a
// WaitSummary.
func summarize(before, after promHistogram) WaitSummary {
	n := float64(after.count) - float64(before.count)
	if n <= 0 {
		return WaitSummary{}
	}
	s := WaitSummary{Mean: seconds(max(after.sum-before.sum, 0) / n)}
	s.P50, _, _ = quantileFigures(before.buckets, after.buckets, 0.50)
	s.P99, s.Max, _ = quantileFigures(before.buckets, after.buckets, 0.99)
	return s
}

// jsonLoopWait is LoopWait in milliseconds (schema.json's "loop_wait").
type jsonLoopWait struct {
	LoopCPU      float64         `json:"loop_cpu_ms"`
	LoopCPUWait  float64         `json:"loop_cpu_wait_ms"`
	CPUWaitShare *float64        `json:"cpu_wait_share"`
	Routes       []jsonRouteWait `json:"routes"`
}

type jsonRouteWait struct {
	Route      string          `json:"route"`
	Requests   int64           `json:"requests"`
	HeadOfLine jsonWaitSummary `json:"head_of_line_ms"`
	CPUWait    jsonWaitSummary `json:"cpu_wait_ms"`
	Handler    jsonWaitSummary `json:"handler_ms"`
}

type jsonWaitSummary struct {
	Mean     float64 `json:"mean"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	MaxBound float64 `json:"max_bound"`
}

func toJSONLoopWait(w *LoopWait) *jsonLoopWait {
	if w == nil {
		return nil
	}
	j := &jsonLoopWait{LoopCPU: ms(w.LoopCPU), LoopCPUWait: ms(w.LoopCPUWait), Routes: []jsonRouteWait{}}
	if share, ok := w.cpuWaitShare(); ok {
		j.CPUWaitShare = &share
	}
	sum := func(s WaitSummary) jsonWaitSummary {
		return jsonWaitSummary{Mean: ms(s.Mean), P50: ms(s.P50), P99: ms(s.P99), MaxBound: ms(s.Max)}
	}
	for _, r := range w.Routes {
		j.Routes = append(j.Routes, jsonRouteWait{Route: r.Route, Requests: r.Requests,
			HeadOfLine: sum(r.HeadOfLine), CPUWait: sum(r.CPUWait), Handler: sum(r.Handler)})
	}
	return j
}
