package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

func TestRequestMetrics(t *testing.T) {
	// Ensure every request is timed once under the pattern that served it,
	// a request no pattern served under "other", and the query (a tid) is
	// never a label; the buckets span the loop's 10 µs to 1 s.
	e := newEnv(t)
	_, tid := e.player("mulder", game.FBI)
	c := e.client()
	c.get("/")
	c.get("/static/style.css")
	c.get("/game?function=hq&tid=" + tid)
	c.get("/game?function=news&tid=" + tid)
	c.get("/nope")
	resp, _ := c.do(emptyRequest(http.MethodDelete, "/login"))
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	req := formRequest("/register", url.Values{"name": {"krycek"}})
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, _ = c.do(req)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	families := scrape(t, handlers.Metrics(e.store, func() gameserver.Stats { return gameserver.Stats{} }, e.srv.RequestMetrics()))
	f := families["statesecrets_request_duration_seconds"]
	require.NotNil(t, f)
	require.Equal(t, dto.MetricType_HISTOGRAM, f.GetType())
	counts := map[string]uint64{}
	for _, m := range f.Metric {
		require.Len(t, m.Label, 1)
		route := m.Label[0].GetValue()
		assert.NotContains(t, route, tid)
		assert.NotContains(t, route, "?")
		counts[route] = m.Histogram.GetSampleCount()
		bounds := m.Histogram.Bucket
		assert.Equal(t, 10e-6, bounds[0].GetUpperBound(), route)
		assert.Equal(t, 1.0, bounds[len(bounds)-2].GetUpperBound(), route, "then +Inf")
	}
	assert.Equal(t, uint64(1), counts["GET /{$}"])
	assert.Equal(t, uint64(1), counts["GET /static/"])
	assert.Equal(t, uint64(2), counts["GET /game"], "hq and news")
	assert.Equal(t, uint64(1), counts["GET /"], "the 404")
	assert.Equal(t, uint64(2), counts["other"], "the 405 and the cross-origin refusal")
	assert.Equal(t, uint64(0), counts["POST /game"], "every route has its series from the start")
	for _, route := range []string{"GET /login", "POST /login", "GET /game/events", "GET /rules"} {
		assert.Contains(t, counts, route)
	}
}

// emptyRequest is a request of method to target with an empty body.
func emptyRequest(method, target string) *http.Request {
	return httptest.NewRequest(method, target, strings.NewReader(""))
}
