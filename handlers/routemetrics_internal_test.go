package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRequestDuration measures what timing a request by route adds
// to it: the same do-nothing handler bare and wrapped by routeMetrics.timed
// (two clock reads, the route's map lookup, one histogram observation).
// The difference of the two ns/op is the cost per request; compare it with
// BenchmarkHQ's and BenchmarkStatic's cpu-ns/op.
func BenchmarkRequestDuration(b *testing.B) {
	patterns := []string{"GET /{$}", "GET /static/", "GET /favicon.ico", "GET /login", "POST /login",
		"GET /rules", "GET /game", "POST /game", "GET /game/events", "GET /"}
	m := newRouteMetrics(patterns)
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	req := httptest.NewRequest(http.MethodGet, "/game?function=hq", nil)
	req.Pattern = "GET /game" // as the ServeMux sets it
	for _, bench := range []struct {
		name string
		h    http.Handler
	}{{"bare", noop}, {"timed", m.timed(noop)}} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bench.h.ServeHTTP(nil, req)
			}
		})
	}
}
