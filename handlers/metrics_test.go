package handlers_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// scrape fetches h's metrics and parses them as Prometheus text.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Header().Get("Content-Type"), "text/plain")
	return testkit.ParseMetrics(t, rec.Body)
}

// value is the single sample of family name.
func value(t *testing.T, families map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f, ok := families[name]
	require.True(t, ok, "metric %s missing", name)
	require.Len(t, f.Metric, 1, name)
	m := f.Metric[0]
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	require.FailNow(t, "not a gauge or counter", name)
	return 0
}

func TestMetrics(t *testing.T) {
	// Ensure the metrics endpoint reports the engine's snapshot and the
	// game's census under Prometheus names, beside the process and Go
	// collectors, in text that parses.
	e := newEnv(t)
	e.player("mulder", game.FBI)
	e.player("krycek", game.MIB)
	snap := gameserver.Stats{Loop: true, OpenConns: 3, AcceptedConns: 40, EvictedIdleConns: 6, Requests: 1234, BytesWritten: 5 << 20,
		LoopBusy: 1500 * time.Millisecond, LoopElapsed: 3 * time.Second, LoopTurns: 999,
		Responses: [6]uint64{2: 1200, 4: 30, 5: 4}, Streams: 5, StreamsCut: 1, StreamsRefused: 8, Deferred: 2,
		LongestTurn: 60 * time.Millisecond, SlowRequests: 7, QueuedOutput: 4096,
		Work: gameserver.WorkStats{Queued: 3, Running: 1, Refused: 9, WorkTime: 2 * time.Second}}
	snap.Lag.Samples, snap.Lag.Sum, snap.Lag.Max = 10, 50*time.Millisecond, 4200*time.Microsecond
	for i, b := range gameserver.LagBuckets {
		if b >= 5*time.Millisecond {
			snap.Lag.Counts[i] = 10
		} else if b >= time.Millisecond {
			snap.Lag.Counts[i] = 8
		}
	}
	snap.Wait = gameserver.WaitStats{Known: true, LoopCPU: 4 * time.Second, LoopCPUWait: 500 * time.Millisecond}
	probe := gameserver.RouteWaits{Route: "GET /static/"}
	probe.HeadOfLine.Samples, probe.HeadOfLine.Sum, probe.HeadOfLine.Counts[len(gameserver.LagBuckets)-1] = 2, 30*time.Millisecond, 2
	snap.WaitByRoute = []gameserver.RouteWaits{{Route: ""}, probe}
	h := handlers.Metrics(e.store, func() gameserver.Stats { return snap })
	families := scrape(t, h)

	assert.Equal(t, 3.0, value(t, families, "gameserver_connections_open"))
	assert.Equal(t, 8.0, value(t, families, "gameserver_streams_refused_total"))
	assert.Equal(t, 4.0, value(t, families, "gameserver_loop_cpu_seconds_total"))
	assert.Equal(t, 0.5, value(t, families, "gameserver_loop_cpu_wait_seconds_total"))
	hol := families["gameserver_request_head_of_line_seconds"]
	require.NotNil(t, hol)
	require.Len(t, hol.Metric, 2, "one histogram per route")
	routes := map[string]uint64{}
	for _, m := range hol.Metric {
		routes[m.Label[0].GetValue()] = m.Histogram.GetSampleCount()
	}
	assert.Equal(t, map[string]uint64{"other": 0, "GET /static/": 2}, routes, `route "" is "other"`)
	for _, name := range []string{"gameserver_request_cpu_wait_seconds", "gameserver_request_handler_seconds"} {
		assert.Equal(t, dto.MetricType_HISTOGRAM, families[name].GetType(), name)
	}
	assert.Equal(t, 40.0, value(t, families, "gameserver_connections_accepted_total"))
	assert.Equal(t, 6.0, value(t, families, "gameserver_idle_conns_evicted_total"))
	assert.Equal(t, dto.MetricType_COUNTER, families["gameserver_idle_conns_evicted_total"].GetType())
	assert.Equal(t, 1234.0, value(t, families, "gameserver_requests_total"))
	assert.Equal(t, float64(5<<20), value(t, families, "gameserver_written_bytes_total"))
	assert.Equal(t, 1.5, value(t, families, "gameserver_loop_busy_seconds_total"))
	assert.Equal(t, dto.MetricType_COUNTER, families["gameserver_loop_busy_seconds_total"].GetType())
	assert.Equal(t, 3.0, value(t, families, "gameserver_loop_elapsed_seconds_total"))
	assert.NotContains(t, families, "gameserver_loop_utilization_ratio", "utilization is rate() of the busy counter")
	assert.Equal(t, 0.06, value(t, families, "gameserver_loop_longest_turn_seconds"))
	assert.Equal(t, 0.0042, value(t, families, "gameserver_loop_lag_max_seconds"), "the exact maximum, not a bucket bound")
	assert.Equal(t, 4096.0, value(t, families, "gameserver_output_queued_bytes"))
	assert.Equal(t, 7.0, value(t, families, "gameserver_slow_requests_total"))
	assert.Equal(t, 5.0, value(t, families, "gameserver_streams_open"))
	assert.Equal(t, 1.0, value(t, families, "gameserver_streams_cut_total"))
	assert.Equal(t, 2.0, value(t, families, "gameserver_deferred_responses"))
	assert.Equal(t, 9.0, value(t, families, "gameserver_work_refused_total"))
	assert.Equal(t, 3.0, value(t, families, "gameserver_work_queued"))
	codes := map[string]float64{}
	for _, m := range families["gameserver_responses_total"].Metric {
		codes[m.Label[0].GetValue()] = m.Counter.GetValue()
	}
	assert.Equal(t, map[string]float64{"1xx": 0, "2xx": 1200, "3xx": 0, "4xx": 30, "5xx": 4}, codes)
	assert.Equal(t, dto.MetricType_HISTOGRAM, families["gameserver_loop_turn_seconds"].GetType())
	lag := families["gameserver_loop_lag_seconds"]
	require.Equal(t, dto.MetricType_HISTOGRAM, lag.GetType())
	hist := lag.Metric[0].Histogram
	assert.Equal(t, uint64(10), hist.GetSampleCount())
	assert.InDelta(t, 0.05, hist.GetSampleSum(), 1e-9)
	for _, b := range hist.Bucket {
		switch b.GetUpperBound() {
		case 0.0025:
			assert.Equal(t, uint64(8), b.GetCumulativeCount())
		case 0.005:
			assert.Equal(t, uint64(10), b.GetCumulativeCount())
		}
	}
	assert.Equal(t, 2.0, value(t, families, "statesecrets_players"))
	assert.Equal(t, 2.0, value(t, families, "statesecrets_sessions"))
	assert.Equal(t, 1.0, value(t, families, "statesecrets_round"))
	assert.Contains(t, families, "process_cpu_seconds_total")
	assert.Contains(t, families, "go_goroutines")

	info := families["statesecrets_build_info"]
	require.NotNil(t, info)
	require.Len(t, info.Metric, 1)
	assert.Equal(t, 1.0, info.Metric[0].GetGauge().GetValue())
	labels := map[string]string{}
	for _, l := range info.Metric[0].Label {
		labels[l.GetName()] = l.GetValue()
	}
	assert.Equal(t, runtime.Version(), labels["goversion"])
	assert.NotEmpty(t, labels["version"])
	assert.NotEmpty(t, labels["revision"])

	// Each scrape reads a fresh snapshot.
	snap.OpenConns = 7
	families = scrape(t, h)
	assert.Equal(t, 7.0, value(t, families, "gameserver_connections_open"))
}

func TestMetrics_TwoScrapers(t *testing.T) {
	// Ensure what one scraper reads does not depend on whether another
	// scraped in between: the exporter keeps no state between scrapes, so
	// scraper A's second scrape is the same with or without B's, and the
	// utilization A computes from its two scrapes (the busy counter's
	// increase over the elapsed counter's, as rate() does) is the loop's
	// over that interval.
	e := newEnv(t)
	snap := gameserver.Stats{Loop: true, LoopBusy: time.Second, LoopElapsed: 10 * time.Second}
	h := handlers.Metrics(e.store, func() gameserver.Stats { return snap })
	utilization := func(a, b map[string]*dto.MetricFamily) float64 {
		busy := value(t, b, "gameserver_loop_busy_seconds_total") - value(t, a, "gameserver_loop_busy_seconds_total")
		elapsed := value(t, b, "gameserver_loop_elapsed_seconds_total") - value(t, a, "gameserver_loop_elapsed_seconds_total")
		return busy / elapsed
	}
	loopText := func(families map[string]*dto.MetricFamily) string {
		var b strings.Builder
		for _, name := range slices.Sorted(maps.Keys(families)) {
			if strings.HasPrefix(name, "gameserver_") {
				expfmt.MetricFamilyToText(&b, families[name])
			}
		}
		return b.String()
	}

	scrape(t, h)                                                            // A's first scrape
	snap.LoopBusy, snap.LoopElapsed = 1500*time.Millisecond, 11*time.Second // busy half of the next second
	alone := scrape(t, h)                                                   // A's second scrape, nobody else scraping

	snap.LoopBusy, snap.LoopElapsed = time.Second, 10*time.Second
	a1 := scrape(t, h)
	snap.LoopBusy, snap.LoopElapsed = 1200*time.Millisecond, 10500*time.Millisecond
	b1 := scrape(t, h) // B scrapes half-way
	snap.LoopBusy, snap.LoopElapsed = 1500*time.Millisecond, 11*time.Second
	a2 := scrape(t, h)
	b2 := scrape(t, h)

	assert.Equal(t, loopText(alone), loopText(a2), "B's scrape changed what A read")
	assert.InDelta(t, 0.5, utilization(a1, a2), 1e-9, "A: busy 0.5 s of 1 s")
	assert.InDelta(t, 0.6, utilization(b1, b2), 1e-9, "B: busy 0.3 s of 0.5 s")
}

func TestMetricsEveryStatsField(t *testing.T) {
	// Ensure every field of gameserver.Stats (and of the structs in it,
	// but for the histograms) has its metric row, or is named as
	// deliberately not exported, and no row names a field Stats has not.
	fields := statsFields(reflect.TypeFor[gameserver.Stats](), "")
	exported, notExported := handlers.StatsMetricFields()
	for _, f := range fields {
		_, skipped := notExported[f]
		assert.True(t, slices.Contains(exported, f) || skipped, "Stats.%s has no metric row and is not in notExported", f)
		assert.False(t, slices.Contains(exported, f) && skipped, "Stats.%s is both exported and not", f)
	}
	for _, f := range append(exported, slices.Collect(maps.Keys(notExported))...) {
		assert.Contains(t, fields, f, "a row names Stats.%s, which does not exist", f)
	}
}

// statsFields returns the selector paths of t's fields, descending into
// struct fields (and a slice's elements) but for histograms (LagStats),
// whose fields export together, and the one field a row may export alone
// (Lag.Max).
func statsFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		path := prefix + f.Name
		ft := f.Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		switch {
		case path == "Lag" || path == "WaitByRoute.Route":
			out = append(out, path) // Lag.Max too, below; a route is the label of the others
			if path == "Lag" {
				out = append(out, "Lag.Max")
			}
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[gameserver.LagStats]() && ft != reflect.TypeFor[time.Duration]():
			out = append(out, statsFields(ft, path+".")...)
		default:
			out = append(out, path)
		}
	}
	return out
}

func TestMetricsAbsentNotZero(t *testing.T) {
	// Ensure a family the engine cannot measure is left out, not written
	// as 0: under net/http (Stats.Loop false) only the connection, byte,
	// request and response counts; where waits are not attributed
	// (Wait.Known false) no wait family.
	e := newEnv(t)
	snap := gameserver.Stats{OpenConns: 2, Requests: 10, Responses: [6]uint64{2: 10}}
	families := scrape(t, handlers.Metrics(e.store, func() gameserver.Stats { return snap }))
	var engine []string
	for name := range families {
		if strings.HasPrefix(name, "gameserver_") {
			engine = append(engine, name)
		}
	}
	slices.Sort(engine)
	assert.Equal(t, []string{"gameserver_connections_accepted_total", "gameserver_connections_open", "gameserver_read_bytes_total",
		"gameserver_requests_total", "gameserver_responses_total", "gameserver_written_bytes_total"}, engine)

	snap.Loop = true
	families = scrape(t, handlers.Metrics(e.store, func() gameserver.Stats { return snap }))
	assert.Contains(t, families, "gameserver_loop_busy_seconds_total", "a loop")
	for _, name := range []string{"gameserver_loop_cpu_seconds_total", "gameserver_loop_cpu_wait_seconds_total",
		"gameserver_request_head_of_line_seconds", "gameserver_request_cpu_wait_seconds", "gameserver_request_handler_seconds"} {
		assert.NotContains(t, families, name, "no wait attribution (the portable back end)")
	}
}

func TestMetricsOpenMetrics(t *testing.T) {
	// Ensure a scraper that asks for OpenMetrics gets it, and one that
	// does not the Prometheus text format.
	e := newEnv(t)
	h := handlers.Metrics(e.store, func() gameserver.Stats { return gameserver.Stats{Loop: true} })
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Header().Get("Content-Type"), "application/openmetrics-text")
	assert.True(t, strings.HasSuffix(rec.Body.String(), "# EOF\n"), "an OpenMetrics exposition ends with # EOF")
	assert.Contains(t, rec.Body.String(), "# TYPE gameserver_loop_busy_seconds counter")
	scrape(t, h) // text/plain without the Accept header
}
