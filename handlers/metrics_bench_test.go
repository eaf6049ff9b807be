package handlers_test

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// BenchmarkMetricsScrape is one scrape of the metrics endpoint, as a
// scraper that does not ask for OpenMetrics gets it: the engine's table
// (with the wait histograms of 14 routes), the census (read at most once
// a second), the process and Go collectors. It runs off the loop, on the
// metrics listener's goroutines; what it costs is CPU the loop's machine
// spends on it.
func BenchmarkMetricsScrape(b *testing.B) {
	e := newEnv(b)
	snap := gameserver.Stats{Loop: true, Wait: gameserver.WaitStats{Known: true}}
	for _, r := range []string{"GET /{$}", "GET /static/", "GET /favicon.ico", "GET /login", "POST /login", "GET /register",
		"POST /register", "GET /logout", "POST /logout", "GET /rules", "GET /game", "POST /game", "GET /game/events", "GET /"} {
		snap.WaitByRoute = append(snap.WaitByRoute, gameserver.RouteWaits{Route: r})
	}
	h := handlers.Metrics(e.store, func() gameserver.Stats { return snap })
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		io.Copy(io.Discard, rec.Body)
	}
}
