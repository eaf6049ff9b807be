package handlers

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestBuckets are the upper bounds, in seconds, of
// statesecrets_request_duration_seconds: on the loop a static file costs
// about 5 µs, a game page 0.05 to 1 ms, a tick or a page after a write a
// few ms; a login's bcrypt hash (about 70 ms) shows only under -engine
// nethttp, where it runs inside the handler's call. Fifteen bounds, so a
// route is 18 series.
var requestBuckets = []float64{
	10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1,
}

// otherRoute is the route label of a request no registered pattern
// served: refused before routing (cross-origin, 403) or with a method its
// path does not allow (405).
const otherRoute = "other"

// routeMetrics times every request by route, the ServeMux pattern that
// served it ("GET /game"): a label with as many values as there are
// routes, never the path or the query (a tid there is a credential, and
// every URL would be a series). The histograms are client_golang's, one
// per route made at start-up, so an observation costs two clock reads, a
// map lookup and a few atomic adds (BenchmarkRequestDuration), and a
// scrape reads them from any goroutine. The clock reads are monotonic
// only, time.Since(epoch), as the loop's own: time.Now reads the wall
// clock too, a third clock_gettime per request.
type routeMetrics struct {
	vec   *prometheus.HistogramVec
	by    map[string]prometheus.Observer // by pattern; read-only once built
	other prometheus.Observer
	epoch time.Time // what the clock reads count from
}

func newRouteMetrics(patterns []string) *routeMetrics {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "statesecrets_request_duration_seconds",
		Help: "Time the handlers took per request, by route (the ServeMux pattern; \"other\": refused before routing or 405): " +
			"under the loop, how long the request held the loop (a deferred response's work and an event stream run after it; " +
			"under net/http they are inside it).",
		Buckets: requestBuckets,
	}, []string{"route"})
	m := &routeMetrics{vec: vec, by: make(map[string]prometheus.Observer, len(patterns)), other: vec.WithLabelValues(otherRoute),
		epoch: time.Now()}
	for _, p := range patterns {
		m.by[p] = vec.WithLabelValues(p)
	}
	return m
}

// timed wraps the whole handler chain: the time counted runs from before
// the first middleware to after the last write the handlers make. The
// route is read after the call, from the Pattern the ServeMux set on r.
func (m *routeMetrics) timed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Since(m.epoch)
		next.ServeHTTP(w, r)
		o, ok := m.by[r.Pattern]
		if !ok {
			o = m.other
		}
		o.Observe((time.Since(m.epoch) - start).Seconds())
	})
}

// routes is the ServeMux with the patterns registered on it remembered,
// so each gets its histogram before the first request.
type routes struct {
	*http.ServeMux
	patterns []string
}

// HandleFunc registers handler for pattern, as http.ServeMux.HandleFunc.
func (m *routes) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, handler)
}

// Handle registers handler for pattern, as http.ServeMux.Handle.
func (m *routes) Handle(pattern string, handler http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, handler)
}

// RequestMetrics returns the collector of the Server's request durations
// by route (statesecrets_request_duration_seconds), for Metrics. It is
// safe to collect from any goroutine while the Server serves.
func (s *Server) RequestMetrics() prometheus.Collector { return s.routes.vec }
