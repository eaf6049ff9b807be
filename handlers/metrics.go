package handlers

import (
	"context"
	"net/http"
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
}

// loopCollector reports the engine's Stats, one snapshot per scrape.
type loopCollector struct{ stats func() gameserver.Stats }

func (c *loopCollector) Describe(ch chan<- *prometheus.Desc) { describe(loopMetrics, ch) }
func (c *loopCollector) Collect(ch chan<- prometheus.Metric) { collect(loopMetrics, c.stats(), ch) }

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
