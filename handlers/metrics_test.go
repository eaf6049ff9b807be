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
		LoopBusy: 1500 * time.Millisecond, LoopTurns: 999}
	h := handlers.Metrics(e.store, func() gameserver.Stats { return snap })
	families := scrape(t, h)

	assert.Equal(t, 3.0, value(t, families, "gameserver_connections_open"))
	assert.Equal(t, 40.0, value(t, families, "gameserver_connections_accepted_total"))
	assert.Equal(t, 1234.0, value(t, families, "gameserver_requests_total"))
	assert.Equal(t, float64(5<<20), value(t, families, "gameserver_written_bytes_total"))
	assert.Equal(t, 1.5, value(t, families, "gameserver_loop_busy_seconds_total"))
	assert.Equal(t, dto.MetricType_COUNTER, families["gameserver_loop_busy_seconds_total"].GetType())
	assert.Equal(t, 2.0, value(t, families, "statesecrets_players"))
	assert.Equal(t, 2.0, value(t, families, "statesecrets_sessions"))
	assert.Equal(t, 1.0, value(t, families, "statesecrets_round"))
	assert.Contains(t, families, "process_cpu_seconds_total")
	assert.Contains(t, families, "go_goroutines")

	// Each scrape reads a fresh snapshot.
	snap.OpenConns = 7
	assert.Equal(t, 7.0, value(t, scrape(t, h), "gameserver_connections_open"))
}
