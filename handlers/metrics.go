package handlers

import (
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
)

// Metrics returns the host's metrics endpoint, in the Prometheus text
// exposition format (promhttp): the engine's loop and connection figures,
// the game's census, and the process and Go runtime collectors. Each scrape
// reads one snapshot of stats (gameserver.Server.Stats, safe from any
// goroutine) and one census query of the store; nothing is counted on the
// request path. Serve it on its own address, never on the game's port:
// it tells anyone who can reach it how busy the game is.
//
// Metric names follow Prometheus's naming guide: base units (seconds,
// bytes), _total for counters, gameserver_ for the engine, statesecrets_
// for the game.
func Metrics(store *game.Store, stats func() gameserver.Stats) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		&loopCollector{stats: stats},
		&censusCollector{store: store},
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// metric is one metric a collector reports: its description and how to
// read its value from a snapshot.
type metric[T any] struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(T) float64
}

func newMetric[T any](name, help string, kind prometheus.ValueType, value func(T) float64) metric[T] {
	return metric[T]{prometheus.NewDesc(name, help, nil, nil), kind, value}
}

func describe[T any](ms []metric[T], ch chan<- *prometheus.Desc) {
	for _, m := range ms {
		ch <- m.desc
	}
}

func collect[T any](ms []metric[T], snap T, ch chan<- prometheus.Metric) {
	for _, m := range ms {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(snap))
	}
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// loopMetrics are the engine's figures, from one gameserver.Stats.
var loopMetrics = []metric[gameserver.Stats]{
	newMetric("gameserver_connections_open", "Client connections open now.", gauge,
		func(s gameserver.Stats) float64 { return float64(s.OpenConns) }),
	newMetric("gameserver_connections_accepted_total", "Client connections accepted.", counter,
		func(s gameserver.Stats) float64 { return float64(s.AcceptedConns) }),
	newMetric("gameserver_connections_rejected_total", "Connections closed at once for the connection cap.", counter,
		func(s gameserver.Stats) float64 { return float64(s.RejectedConns) }),
	newMetric("gameserver_requests_total", "Responses started: handlers called plus the loop's own error responses.", counter,
		func(s gameserver.Stats) float64 { return float64(s.Requests) }),
	newMetric("gameserver_read_bytes_total", "Bytes read from clients.", counter,
		func(s gameserver.Stats) float64 { return float64(s.BytesRead) }),
	newMetric("gameserver_written_bytes_total", "Bytes written to clients.", counter,
		func(s gameserver.Stats) float64 { return float64(s.BytesWritten) }),
	newMetric("gameserver_loop_busy_seconds_total", "Time the loop spent working rather than waiting for events; its rate is the loop's utilization.", counter,
		func(s gameserver.Stats) float64 { return s.LoopBusy.Seconds() }),
	newMetric("gameserver_loop_turns_total", "Loop turns (returns from the event wait).", counter,
		func(s gameserver.Stats) float64 { return float64(s.LoopTurns) }),
	newMetric("gameserver_loop_elapsed_seconds_total", "Time since the loop started; busy over elapsed is its utilization.", counter,
		func(s gameserver.Stats) float64 { return s.LoopElapsed.Seconds() }),
	newMetric("gameserver_loop_slow_turns_total", "Loop turns longer than 10 ms: every other client waited that long.", counter,
		func(s gameserver.Stats) float64 { return float64(s.SlowTurns) }),
	newMetric("gameserver_loop_longest_turn_seconds", "The longest loop turn since the loop started.", gauge,
		func(s gameserver.Stats) float64 { return s.LongestTurn.Seconds() }),
	newMetric("gameserver_loop_longest_turn_recent_seconds", "The longest loop turn in the last 10 to 20 seconds.", gauge,
		func(s gameserver.Stats) float64 { return s.LongestTurnRecent.Seconds() }),
	newMetric("gameserver_loop_lag_max_seconds", "The latest the loop-lag timer ever fired.", gauge,
		func(s gameserver.Stats) float64 { return s.Lag.Max.Seconds() }),
	newMetric("gameserver_slow_requests_total", "Handler calls and finish functions that held the loop over the slow-request threshold (logged).", counter,
		func(s gameserver.Stats) float64 { return float64(s.SlowRequests) }),
	newMetric("gameserver_deferred_responses", "Responses deferred now, waiting to be finished.", gauge,
		func(s gameserver.Stats) float64 { return float64(s.Deferred) }),
	newMetric("gameserver_streams_open", "Event streams open now.", gauge,
		func(s gameserver.Stats) float64 { return float64(s.Streams) }),
	newMetric("gameserver_streams_cut_total", "Event streams closed for a reader too slow (over the stream buffer).", counter,
		func(s gameserver.Stats) float64 { return float64(s.StreamsCut) }),
	newMetric("gameserver_work_queued", "Worker-pool tasks waiting for a worker now.", gauge,
		func(s gameserver.Stats) float64 { return float64(s.Work.Queued) }),
	newMetric("gameserver_work_running", "Worker-pool tasks running now.", gauge,
		func(s gameserver.Stats) float64 { return float64(s.Work.Running) }),
	newMetric("gameserver_work_refused_total", "Worker-pool tasks refused with 503 for a full queue.", counter,
		func(s gameserver.Stats) float64 { return float64(s.Work.Refused) }),
	newMetric("gameserver_work_skipped_total", "Worker-pool tasks never started because their client had gone.", counter,
		func(s gameserver.Stats) float64 { return float64(s.Work.Skipped) }),
	newMetric("gameserver_work_finished_total", "Worker-pool tasks run to their end.", counter,
		func(s gameserver.Stats) float64 { return float64(s.Work.Finished) }),
	newMetric("gameserver_work_seconds_total", "Time workers spent running tasks.", counter,
		func(s gameserver.Stats) float64 { return s.Work.WorkTime.Seconds() }),
}

var (
	responsesDesc = prometheus.NewDesc("gameserver_responses_total",
		"Responses ended, by status class (an event stream counts as a 200 when it ends).", []string{"code"}, nil)
	lagDesc = prometheus.NewDesc("gameserver_loop_lag_seconds",
		"How late the loop-lag timer fired (every 10 ms): what a client arriving at a random moment waited for the loop.", nil, nil)
	utilizationDesc = prometheus.NewDesc("gameserver_loop_utilization_ratio",
		"Loop busy time over elapsed time since the previous scrape (Node's eventLoopUtilization), 0 to 1.", nil, nil)
)

// loopCollector reports the engine's Stats, one snapshot per scrape. It
// remembers the previous scrape's snapshot for the utilization ratio.
type loopCollector struct {
	stats func() gameserver.Stats
	mu    sync.Mutex
	prev  gameserver.Stats
}

func (c *loopCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(loopMetrics, ch)
	ch <- responsesDesc
	ch <- lagDesc
	ch <- utilizationDesc
}

func (c *loopCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.stats()
	collect(loopMetrics, snap, ch)
	for class := 1; class < len(snap.Responses); class++ {
		ch <- prometheus.MustNewConstMetric(responsesDesc, counter, float64(snap.Responses[class]), strconv.Itoa(class)+"xx")
	}
	buckets := make(map[float64]uint64, len(gameserver.LagBuckets))
	for i, b := range gameserver.LagBuckets {
		buckets[b.Seconds()] = snap.Lag.Counts[i]
	}
	ch <- prometheus.MustNewConstHistogram(lagDesc, snap.Lag.Samples, snap.Lag.Sum.Seconds(), buckets)
	c.mu.Lock()
	util := snap.Utilization(c.prev)
	c.prev = snap
	c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(utilizationDesc, gauge, util)
}

// censusMetrics are the game's head counts.
var censusMetrics = []metric[game.Census]{
	newMetric("statesecrets_players", "Registered players.", gauge,
		func(c game.Census) float64 { return float64(c.Players) }),
	newMetric("statesecrets_sessions", "Sessions not yet expired.", gauge,
		func(c game.Census) float64 { return float64(c.Sessions) }),
	newMetric("statesecrets_tick", "The game clock's tick.", gauge,
		func(c game.Census) float64 { return float64(c.Tick) }),
	newMetric("statesecrets_round", "The current round, from 1.", gauge,
		func(c game.Census) float64 { return float64(c.Round) }),
}

// censusTimeout bounds the census query of one scrape: the store's one
// connection may be busy with the loop's work, and a scrape must not hang.
const censusTimeout = 2 * time.Second

// censusCollector reports the game's census, one query per scrape. The
// query shares the store's connection with the loop, which may wait for it
// (a few tens of microseconds).
type censusCollector struct{ store *game.Store }

func (c *censusCollector) Describe(ch chan<- *prometheus.Desc) { describe(censusMetrics, ch) }

func (c *censusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), censusTimeout)
	defer cancel()
	census, err := c.store.Census(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(censusMetrics[0].desc, err)
		return
	}
	collect(censusMetrics, census, ch)
}
