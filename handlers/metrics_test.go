package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// scrape fetches h's metrics and parses them as Prometheus text.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Header().Get("Content-Type"), "text/plain")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	require.NoError(t, err, "the body parses as Prometheus text:\n%s", rec.Body)
	return families
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
	snap := gameserver.Stats{OpenConns: 3, AcceptedConns: 40, Requests: 1234, BytesWritten: 5 << 20,
		LoopBusy: 1500 * time.Millisecond, LoopElapsed: 3 * time.Second, LoopTurns: 999,
		Responses: [6]uint64{2: 1200, 4: 30, 5: 4}, Streams: 5, StreamsCut: 1, Deferred: 2,
		LongestTurn: 60 * time.Millisecond, SlowRequests: 7,
		Work: gameserver.WorkStats{Queued: 3, Running: 1, Refused: 9, WorkTime: 2 * time.Second}}
	snap.Lag.Samples, snap.Lag.Sum = 10, 50*time.Millisecond
	for i, b := range gameserver.LagBuckets {
		if b >= 5*time.Millisecond {
			snap.Lag.Counts[i] = 10
		} else if b >= time.Millisecond {
			snap.Lag.Counts[i] = 8
		}
	}
	h := handlers.Metrics(e.store, func() gameserver.Stats { return snap })
	families := scrape(t, h)

	assert.Equal(t, 3.0, value(t, families, "gameserver_connections_open"))
	assert.Equal(t, 40.0, value(t, families, "gameserver_connections_accepted_total"))
	assert.Equal(t, 1234.0, value(t, families, "gameserver_requests_total"))
	assert.Equal(t, float64(5<<20), value(t, families, "gameserver_written_bytes_total"))
	assert.Equal(t, 1.5, value(t, families, "gameserver_loop_busy_seconds_total"))
	assert.Equal(t, dto.MetricType_COUNTER, families["gameserver_loop_busy_seconds_total"].GetType())
	assert.Equal(t, 0.5, value(t, families, "gameserver_loop_utilization_ratio"), "busy 1.5 s of 3 s")
	assert.Equal(t, 0.06, value(t, families, "gameserver_loop_longest_turn_seconds"))
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

	// Each scrape reads a fresh snapshot; utilization is since the last.
	snap.OpenConns = 7
	snap.LoopBusy += 900 * time.Millisecond
	snap.LoopElapsed += time.Second
	families = scrape(t, h)
	assert.Equal(t, 7.0, value(t, families, "gameserver_connections_open"))
	assert.InDelta(t, 0.9, value(t, families, "gameserver_loop_utilization_ratio"), 1e-9)
}
