package handlers

import (
	"cmp"
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/version"
)

// Metrics returns the host's metrics endpoint (promhttp), in the
// Prometheus text exposition format, or in OpenMetrics to a scraper that
// asks for it (Accept: application/openmetrics-text, as Prometheus
// does): the engine's loop and connection figures,
// the game's census, the build (statesecrets_build_info), the process and
// Go runtime collectors, and any more collectors given (a Server's
// request durations: Server.RequestMetrics). Each scrape reads one
// snapshot of stats (gameserver.Server.Stats, safe from any goroutine) and
// at most one census query of the store; the engine's figures cost
// nothing on the request path. Every value is a function of the snapshot
// alone, so any number of scrapers see the same figures: none depends on
// when another scraped. Serve it on its own address, never on the game's
// port: it tells anyone who can reach it how busy the game is.
//
// Metric names follow Prometheus's naming guide: base units (seconds,
// bytes), _total for counters, gameserver_ for the engine, statesecrets_
// for the game. The loop's utilization is
// rate(gameserver_loop_busy_seconds_total[W]) over the window W the
// reader picks: no ratio gauge (deploy/README.md, Monitoring, says why).
// A figure the engine cannot measure is absent, not zero: under -engine
// nethttp (Stats.Loop false) every family but the connection, byte,
// request and response counts; where the engine does not attribute
// waits (Stats.Wait.Known false) the wait families.
func Metrics(store *game.Store, stats func() gameserver.Stats, more ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		table[gameserver.Stats]{rows: loopRows, snap: func() (gameserver.Stats, error) { return stats(), nil }},
		table[game.Census]{rows: censusRows, snap: (&census{store: store}).read},
		buildInfo(version.Get()),
	)
	reg.MustRegister(more...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// A row is one metric family of a collector's table: the field of T it
// exports (a Go selector path, "Work.Queued"), its description, how to
// write its samples from one snapshot of T, and, for a figure not every
// snapshot has, whether this one has it (nil: always). A family a
// snapshot cannot measure is left out of the scrape, not written as 0,
// so a dashboard shows "no data" rather than a false zero.
type row[T any] struct {
	field   string
	desc    *prometheus.Desc
	emit    func(d *prometheus.Desc, snap T, ch chan<- prometheus.Metric)
	present func(T) bool
}

// when returns r, present only in the snapshots ok accepts.
func (r row[T]) when(ok func(T) bool) row[T] {
	r.present = ok
	return r
}

// counter is a row of one counter sample, gauge one of a gauge.
func counter[T any](field, name, help string, value func(T) float64) row[T] {
	return scalar(field, name, help, prometheus.CounterValue, value)
}

func gauge[T any](field, name, help string, value func(T) float64) row[T] {
	return scalar(field, name, help, prometheus.GaugeValue, value)
}

func scalar[T any](field, name, help string, kind prometheus.ValueType, value func(T) float64) row[T] {
	return row[T]{field: field, desc: prometheus.NewDesc(name, help, nil, nil), emit: func(d *prometheus.Desc, s T, ch chan<- prometheus.Metric) {
		ch <- prometheus.MustNewConstMetric(d, kind, value(s))
	}}
}

// histogram is a row of one of the engine's histograms (a LagStats, its
// Counts at gameserver.LagBuckets) as a Prometheus histogram in seconds.
func histogram[T any](field, name, help string, value func(T) gameserver.LagStats) row[T] {
	return row[T]{field: field, desc: prometheus.NewDesc(name, help, nil, nil), emit: func(d *prometheus.Desc, s T, ch chan<- prometheus.Metric) {
		ch <- constHistogram(d, value(s))
	}}
}

// constHistogram is h as a Prometheus histogram in seconds.
func constHistogram(d *prometheus.Desc, h gameserver.LagStats, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(gameserver.LagBuckets))
	for i, b := range gameserver.LagBuckets {
		buckets[b.Seconds()] = h.Counts[i]
	}
	return prometheus.MustNewConstHistogram(d, h.Samples, h.Sum.Seconds(), buckets, labels...)
}

// byRoute is a row of one of the engine's per-route histograms
// (Stats.WaitByRoute), label route: the ServeMux pattern, "other" for
// the requests no pattern served.
func byRoute(field, name, help string, value func(gameserver.RouteWaits) gameserver.LagStats) row[stats] {
	return row[stats]{field: field, desc: prometheus.NewDesc(name, help, []string{"route"}, nil), emit: func(d *prometheus.Desc, s stats, ch chan<- prometheus.Metric) {
		for _, r := range s.WaitByRoute {
			ch <- constHistogram(d, value(r), cmp.Or(r.Route, otherRoute))
		}
	}}
}

// byClass is a row of counters by HTTP status class, label code "1xx" to
// "5xx", from counts indexed by status/100 (index 0 unused).
func byClass[T any](field, name, help string, value func(T) [6]uint64) row[T] {
	return row[T]{field: field, desc: prometheus.NewDesc(name, help, []string{"code"}, nil), emit: func(d *prometheus.Desc, s T, ch chan<- prometheus.Metric) {
		counts := value(s)
		for class := 1; class < len(counts); class++ {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(counts[class]), strconv.Itoa(class)+"xx")
		}
	}}
}

// table is a prometheus.Collector (client_golang's custom-collector
// shape) that reads one snapshot of T per scrape and writes every row
// from it. It keeps no state between scrapes.
type table[T any] struct {
	rows []row[T]
	snap func() (T, error)
}

func (t table[T]) Describe(ch chan<- *prometheus.Desc) {
	for _, r := range t.rows {
		ch <- r.desc
	}
}

func (t table[T]) Collect(ch chan<- prometheus.Metric) {
	s, err := t.snap()
	for _, r := range t.rows {
		switch {
		case err != nil:
			ch <- prometheus.NewInvalidMetric(r.desc, err) // the scrape answers 500 naming err
		case r.present == nil || r.present(s):
			r.emit(r.desc, s, ch)
		}
	}
}

// stats is the engine's snapshot, shortened for the table below.
type stats = gameserver.Stats

// ofLoop says a snapshot has the figures only an event loop measures
// (gameserver.Stats.Loop: not under -engine nethttp); waitKnown those of
// the wait attribution (Stats.Wait.Known: not on the portable back end).
func ofLoop(s stats) bool    { return s.Loop }
func waitKnown(s stats) bool { return s.Loop && s.Wait.Known }

// loopRows are the engine's figures, one row per exported family: a new
// figure in gameserver.Stats is one row here, or an entry in
// notExported (TestMetricsEveryStatsField holds both to it).
var loopRows = []row[stats]{
	gauge("OpenConns", "gameserver_connections_open", "Client connections open now.",
		func(s stats) float64 { return float64(s.OpenConns) }),
	counter("AcceptedConns", "gameserver_connections_accepted_total", "Client connections accepted.",
		func(s stats) float64 { return float64(s.AcceptedConns) }),
	counter("RejectedConns", "gameserver_connections_rejected_total", "Connections closed at once for the connection cap or the cap per client address.",
		func(s stats) float64 { return float64(s.RejectedConns) }).when(ofLoop),
	counter("EvictedIdleConns", "gameserver_idle_conns_evicted_total", "Idle connections closed to make room for a new one at the connection cap.",
		func(s stats) float64 { return float64(s.EvictedIdleConns) }).when(ofLoop),
	counter("Requests", "gameserver_requests_total", "Responses started: handlers called plus the loop's own error responses.",
		func(s stats) float64 { return float64(s.Requests) }),
	byClass("Responses", "gameserver_responses_total", "Responses ended, by status class (an event stream counts as a 200 when it ends).",
		func(s stats) [6]uint64 { return s.Responses }),
	counter("BytesRead", "gameserver_read_bytes_total", "Bytes read from clients.",
		func(s stats) float64 { return float64(s.BytesRead) }),
	counter("BytesWritten", "gameserver_written_bytes_total", "Bytes written to clients.",
		func(s stats) float64 { return float64(s.BytesWritten) }),
	gauge("QueuedOutput", "gameserver_output_queued_bytes", "Memory held by connections' queued output now (the loop's MaxOutputBytes budget).",
		func(s stats) float64 { return float64(s.QueuedOutput) }).when(ofLoop),
	counter("LoopBusy", "gameserver_loop_busy_seconds_total", "Time the loop spent working rather than waiting for events; its rate is the loop's utilization, 0 to 1.",
		func(s stats) float64 { return s.LoopBusy.Seconds() }).when(ofLoop),
	counter("LoopElapsed", "gameserver_loop_elapsed_seconds_total", "Time since the loop started; busy over elapsed is its utilization since then.",
		func(s stats) float64 { return s.LoopElapsed.Seconds() }).when(ofLoop),
	counter("LoopTurns", "gameserver_loop_turns_total", "Loop turns (returns from the event wait).",
		func(s stats) float64 { return float64(s.LoopTurns) }).when(ofLoop),
	counter("SlowTurns", "gameserver_loop_slow_turns_total", "Loop turns longer than 10 ms: every other client waited that long.",
		func(s stats) float64 { return float64(s.SlowTurns) }).when(ofLoop),
	histogram("Turns", "gameserver_loop_turn_seconds", "How long each loop turn held the loop (no other client is served during a turn).",
		func(s stats) gameserver.LagStats { return s.Turns }).when(ofLoop),
	gauge("LongestTurn", "gameserver_loop_longest_turn_seconds", "The longest loop turn since the loop started, exactly.",
		func(s stats) float64 { return s.LongestTurn.Seconds() }).when(ofLoop),
	gauge("LongestTurnRecent", "gameserver_loop_longest_turn_recent_seconds", "The longest loop turn in the last 10 to 20 seconds, exactly.",
		func(s stats) float64 { return s.LongestTurnRecent.Seconds() }).when(ofLoop),
	gauge("LongestTurnOwnRecent", "gameserver_loop_longest_turn_own_recent_seconds", "Of the sampled loop turns in the last 10 to 20 seconds, the longest "+
		"less its wait for a CPU: what it would have held the loop with a CPU of its own; far under gameserver_loop_longest_turn_recent_seconds, the machine made the long turn.",
		func(s stats) float64 { return s.LongestTurnOwnRecent.Seconds() }).when(waitKnown),
	histogram("Lag", "gameserver_loop_lag_seconds", "How late the loop-lag timer fired (every 10 ms): what a client arriving at a random moment waited for the loop.",
		func(s stats) gameserver.LagStats { return s.Lag }).when(ofLoop),
	gauge("Lag.Max", "gameserver_loop_lag_max_seconds", "The latest the loop-lag timer fired since the loop started, exactly.",
		func(s stats) float64 { return s.Lag.Max.Seconds() }).when(ofLoop),
	counter("Wait.LoopCPU", "gameserver_loop_cpu_seconds_total", "Time the loop's thread ran on a CPU (the kernel's account of the thread).",
		func(s stats) float64 { return s.Wait.LoopCPU.Seconds() }).when(waitKnown),
	counter("Wait.LoopCPUWait", "gameserver_loop_cpu_wait_seconds_total", "Time the loop's thread was runnable but waiting for a CPU (run-queue delay, preemption): "+
		"its increase over that of itself plus gameserver_loop_cpu_seconds_total is the share of its time the loop waited for a CPU.",
		func(s stats) float64 { return s.Wait.LoopCPUWait.Seconds() }).when(waitKnown),
	byRoute("WaitByRoute.HeadOfLine", "gameserver_request_head_of_line_seconds", "Of a request's wait between the loop learning it was ready and its handler's start, "+
		"the time the loop ran other work (head-of-line blocking), by route; sampled turns only (_count is the requests attributed).",
		func(r gameserver.RouteWaits) gameserver.LagStats { return r.HeadOfLine }).when(waitKnown),
	byRoute("WaitByRoute.CPUWait", "gameserver_request_cpu_wait_seconds", "Of a request's wait between the loop learning it was ready and its handler's start, "+
		"the time the loop's thread waited for a CPU (the machine's doing), by route; the same requests as gameserver_request_head_of_line_seconds.",
		func(r gameserver.RouteWaits) gameserver.LagStats { return r.CPUWait }).when(waitKnown),
	byRoute("WaitByRoute.Handler", "gameserver_request_handler_seconds", "The handler's own time of the requests gameserver_request_head_of_line_seconds counts, by route.",
		func(r gameserver.RouteWaits) gameserver.LagStats { return r.Handler }).when(waitKnown),
	counter("SlowRequests", "gameserver_slow_requests_total", "Handler calls and finish functions that held the loop over the slow-request threshold (logged).",
		func(s stats) float64 { return float64(s.SlowRequests) }).when(ofLoop),
	gauge("Deferred", "gameserver_deferred_responses", "Responses deferred now, waiting to be finished.",
		func(s stats) float64 { return float64(s.Deferred) }).when(ofLoop),
	gauge("Streams", "gameserver_streams_open", "Event streams open now.",
		func(s stats) float64 { return float64(s.Streams) }).when(ofLoop),
	counter("StreamsCut", "gameserver_streams_cut_total", "Event streams closed for a reader too slow (over the stream buffer).",
		func(s stats) float64 { return float64(s.StreamsCut) }).when(ofLoop),
	counter("StreamsRefused", "gameserver_streams_refused_total", "Event streams refused for the cap on open streams (the handler answered instead).",
		func(s stats) float64 { return float64(s.StreamsRefused) }).when(ofLoop),
	gauge("Work.Workers", "gameserver_work_workers", "Worker-pool goroutines started so far.",
		func(s stats) float64 { return float64(s.Work.Workers) }).when(ofLoop),
	gauge("Work.Queued", "gameserver_work_queued", "Worker-pool tasks waiting for a worker now.",
		func(s stats) float64 { return float64(s.Work.Queued) }).when(ofLoop),
	gauge("Work.Running", "gameserver_work_running", "Worker-pool tasks running now.",
		func(s stats) float64 { return float64(s.Work.Running) }).when(ofLoop),
	counter("Work.Refused", "gameserver_work_refused_total", "Worker-pool tasks refused with 503 for a full queue.",
		func(s stats) float64 { return float64(s.Work.Refused) }).when(ofLoop),
	counter("Work.Skipped", "gameserver_work_skipped_total", "Worker-pool tasks never started because their client had gone.",
		func(s stats) float64 { return float64(s.Work.Skipped) }).when(ofLoop),
	counter("Work.Finished", "gameserver_work_finished_total", "Worker-pool tasks run to their end.",
		func(s stats) float64 { return float64(s.Work.Finished) }).when(ofLoop),
	counter("Work.WorkTime", "gameserver_work_seconds_total", "Time workers spent running tasks.",
		func(s stats) float64 { return s.Work.WorkTime.Seconds() }).when(ofLoop),
}

// notExported names the gameserver.Stats fields deliberately not
// exported, and why.
var notExported = map[string]string{
	"Loop":              "says which families a snapshot has (ofLoop)",
	"Wait.Known":        "says whether the wait families are present (waitKnown)",
	"Wait.HeadOfLine":   "the sum over routes of gameserver_request_head_of_line_seconds",
	"Wait.CPUWait":      "the sum over routes of gameserver_request_cpu_wait_seconds",
	"Wait.Handler":      "the sum over routes of gameserver_request_handler_seconds",
	"WaitByRoute.Route": "the route label of the gameserver_request_* families",
}

// censusRows are the game's head counts.
var censusRows = []row[game.Census]{
	gauge("Players", "statesecrets_players", "Registered players.",
		func(c game.Census) float64 { return float64(c.Players) }),
	gauge("Sessions", "statesecrets_sessions", "Sessions not yet expired.",
		func(c game.Census) float64 { return float64(c.Sessions) }),
	gauge("Tick", "statesecrets_tick", "The game clock's tick.",
		func(c game.Census) float64 { return float64(c.Tick) }),
	gauge("Round", "statesecrets_round", "The current round, from 1.",
		func(c game.Census) float64 { return float64(c.Round) }),
}

// censusTimeout bounds the census query of one scrape: the store's one
// connection may be busy with the loop's work, and a scrape must not hang.
const censusTimeout = 2 * time.Second

// censusMaxAge is how long a census read serves scrapes.
const censusMaxAge = time.Second

// census reads the game's census for the table. Its query shares the
// store's connection with the loop, which may wait for it (a few tens of
// microseconds), so a census is read at most once per censusMaxAge however
// often the endpoint is scraped.
type census struct {
	store *game.Store
	mu    sync.Mutex
	last  game.Census
	at    time.Time
}

func (c *census) read() (game.Census, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < censusMaxAge {
		return c.last, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), censusTimeout)
	defer cancel()
	got, err := c.store.Census(ctx)
	if err != nil {
		return game.Census{}, err
	}
	c.last, c.at = got, time.Now()
	return got, nil
}

// buildInfo is statesecrets_build_info{version,revision,goversion} 1, the
// usual shape of a build-info metric: join on it (group_left) to label
// other series with the build, or graph it to see when a release rolled
// out.
func buildInfo(v version.Info) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "statesecrets_build_info",
		Help:        "The running build: version, VCS revision and Go version in the labels; the value is always 1.",
		ConstLabels: prometheus.Labels{"version": v.Version, "revision": v.Revision, "goversion": v.GoVersion},
	})
	g.Set(1)
	return g
}
