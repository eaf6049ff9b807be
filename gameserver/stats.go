package gameserver

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Turn figures.
const (
	slowTurn   = 10 * time.Millisecond // a turn longer than this is counted in Stats.SlowTurns
	turnWindow = 10 * time.Second      // Stats.LongestTurnRecent covers the current and the previous window
)

// Stats is a snapshot of a Server's counters since Serve began. The loop
// publishes it at the end of every loop turn.
type Stats struct {
	// Loop is true in every Stats a Server returns: an event loop
	// measured these figures. A Stats filled by something else (such as
	// a net/http server counting what it can, as cmd/gameserver's
	// -engine nethttp does) leaves it false: then only the connection,
	// byte, request and response counts (OpenConns, AcceptedConns,
	// BytesRead, BytesWritten, Requests, Responses) mean anything, and
	// the other fields are unknown, not zero: exporters leave them out.
	Loop bool

	OpenConns      int           // client connections open now
	AcceptedConns  uint64        // client connections accepted in total
	RejectedConns  uint64        // connections closed at once for MaxConns or MaxConnsPerAddr
	Requests       uint64        // responses started (handlers called plus error responses)
	BytesRead      uint64        // bytes read from clients
	BytesWritten   uint64        // bytes written to clients
	LoopBusy       time.Duration // time the loop spent working, not waiting in epoll_wait (the turn in progress included)
	LoopTurns      uint64        // loop iterations (epoll_wait returns)
	Deferred       int           // responses deferred now (see Defer), waiting for Finish
	Streams        int           // event streams open now (see Stream)
	StreamsCut     uint64        // event streams closed for going over Config.StreamBuffer
	StreamsRefused uint64        // Stream calls refused for Config.MaxStreams (ErrTooManyStreams)

	// EvictedIdleConns counts the idle connections closed to make room
	// for a new one at Config.MaxConns (see there); the new one counts in
	// AcceptedConns, not RejectedConns.
	EvictedIdleConns uint64

	// Responses counts the responses that ended, by status class:
	// Responses[2] the 2xx, ... Responses[5] the 5xx (a stream counts as
	// a 200 when it ends); Responses[0] stays 0. Requests counts them as
	// they start.
	Responses [6]uint64

	// LoopElapsed is the time since the loop started (until it stopped):
	// with LoopBusy, the loop's utilization (see Utilization).
	LoopElapsed time.Duration
	// LongestTurn is the longest loop turn since the loop started;
	// LongestTurnRecent the longest in the last 10 to 20 seconds (the
	// current 10-second window and the one before it). While a turn runs
	// no other client is served, so this is the worst wait the loop
	// imposed.
	LongestTurn       time.Duration
	LongestTurnRecent time.Duration
	SlowTurns         uint64 // loop turns longer than 10 ms

	// LongestTurnOwnRecent is, over the same window as LongestTurnRecent,
	// the longest of the sampled turns (see WaitStats) less the time the
	// loop's thread waited for a CPU during each: its time on a CPU and
	// blocked (on a disk, say), what the turn would have held the loop
	// with a CPU of its own. Where it is well under LongestTurnRecent
	// the machine made the long turn, not the server. Zero while Wait is
	// unknown (the portable back end) or no turn was sampled.
	LongestTurnOwnRecent time.Duration

	Lag LagStats // how late the loop-lag timer fired (Config.LagResolution)
	// Turns is the histogram of loop turn durations, in LagStats's shape
	// (Counts at LagBuckets): how long each turn held the loop. It is
	// refreshed with each lag sample (every Config.LagResolution), and
	// stays zero when the lag timer is off.
	Turns        LagStats
	SlowRequests uint64    // slow requests logged in total (Config.SlowRequest)
	Work         WorkStats // the worker pool (Go)
	QueuedOutput int       // bytes of memory held by connections' queued output now (see Config.MaxOutputBytes)

	// Wait is the loop's account of why requests waited for their
	// handler: behind other work on the loop, or for a CPU (see
	// WaitStats; unknown on the portable back end).
	Wait WaitStats
	// WaitByRoute is Wait's histograms by route (the ServeMux pattern),
	// sorted by Route; nil while none was attributed. The slice is the
	// caller's.
	WaitByRoute []RouteWaits
}

// counters are the loop's running totals, in plain fields: only the loop
// touches them. Most are Stats's own fields, so a new figure is one field
// of Stats (and a row in the exporter, handlers/metrics.go) and the line
// that counts it. publish copies them for Stats once per loop turn, so
// counting costs no atomic operation per request.
type counters struct {
	Stats
	longestCur  time.Duration // longest turn of the current window
	longestPrev time.Duration // longest turn of the previous window
	ownCur      time.Duration // longest sampled turn's own time in the current window
	ownPrev     time.Duration // and in the previous
	window      int64         // loop clock at which the current window began
}

// countResponse counts a response that ended with status.
func (s *counters) countResponse(status int) {
	s.Responses[min(max(status/100, 0), 5)]++
}

// statsBox is the snapshot other goroutines read; the lock is held only to
// copy it, never while the loop waits. turnStart and started let Stats
// count the turn in progress and the time since the loop started without
// waiting for the loop.
type statsBox struct {
	mu        sync.Mutex
	snap      Stats
	started   atomic.Int64 // loop clock when the loop started, +1 (0: not yet)
	stopped   atomic.Int64 // loop clock when the loop stopped, +1 (0: not yet)
	turnStart atomic.Int64 // loop clock at the start of the turn in progress, +1 (0: waiting)
}

// startTurn begins a loop turn: it notes the time, which the turn's busy
// time counts from, and refreshes the cached Date field once per second.
func (l *loop) startTurn(wall time.Time) {
	l.now = int64(wall.Sub(l.epoch))
	l.turnWall = wall
	l.pub.turnStart.Store(l.now + 1)
	if l.turn == 0 {
		l.pub.started.Store(l.now + 1)
	}
	l.turn++
	l.beginWaitTurn()
	if sec := wall.Unix(); sec != l.dateSec {
		l.dateSec = sec
		l.dateField = append(l.dateField[:0], "Date: "...)
		l.dateField = wall.UTC().AppendFormat(l.dateField, http.TimeFormat)
		l.dateField = append(l.dateField, "\r\n"...)
		if l.access != nil {
			l.access.setDate(wall)
		}
	}
}

// endTurn ends a loop turn, in either back end: it writes the turn's
// access log lines, counts the turn and its busy time (the access log
// write included, as Node's eventLoopUtilization counts everything
// outside the wait) and publishes the counters, before the loop waits for
// the next events.
func (l *loop) endTurn() {
	if l.access != nil {
		if err := l.access.flush(); err != nil {
			l.cfg.Logger.Error("gameserver: access log", "err", err)
		}
	}
	s := &l.count
	s.LoopTurns++
	d := time.Since(l.turnWall)
	s.LoopBusy += d
	if d > slowTurn {
		s.SlowTurns++
	}
	s.LongestTurn = max(s.LongestTurn, d)
	l.lag.turns.record(d)
	if now := l.now; now-s.window >= int64(turnWindow) {
		s.longestPrev, s.ownPrev = s.longestCur, s.ownCur
		if now-s.window >= 2*int64(turnWindow) {
			s.longestPrev, s.ownPrev = 0, 0
		}
		s.longestCur, s.ownCur, s.window = 0, 0, now
	}
	s.longestCur = max(s.longestCur, d)
	if own, ok := l.endWaitTurn(d); ok {
		s.ownCur = max(s.ownCur, own)
	}
	l.budget.release()
	l.publish()
	l.pub.turnStart.Store(0)
}

// publish makes the loop's counters visible to Stats, with the figures
// kept elsewhere on the loop.
func (l *loop) publish() {
	s := &l.count
	snap := s.Stats
	snap.LongestTurnRecent = max(s.longestCur, s.longestPrev)
	snap.LongestTurnOwnRecent = max(s.ownCur, s.ownPrev)
	snap.Lag, snap.Turns = l.lag.sum, l.lag.turnSum
	snap.QueuedOutput = l.budget.mem
	snap.Wait, snap.WaitByRoute = l.wait.sum, l.wait.byRoute
	l.pub.mu.Lock()
	l.pub.snap = snap
	l.pub.mu.Unlock()
}

// markStopped records when the loop stopped, for LoopElapsed.
func (l *loop) markStopped() {
	l.pub.stopped.CompareAndSwap(0, l.clock()+1)
}

// stats returns the last published snapshot (Server.Stats), with the
// figures that need no loop brought up to now: the busy time of a turn in
// progress, the elapsed time, the slow-request count and the worker pool.
func (l *loop) stats() Stats {
	l.pub.mu.Lock()
	s := l.pub.snap
	l.pub.mu.Unlock()
	now := l.clock()
	if t := l.pub.stopped.Load(); t != 0 {
		now = t - 1
	} else if t := l.pub.turnStart.Load(); t != 0 {
		s.LoopBusy += time.Duration(max(now-(t-1), 0))
	}
	if t := l.pub.started.Load(); t != 0 {
		s.LoopElapsed = time.Duration(max(now-(t-1), 0))
	}
	s.Loop = true
	s.SlowRequests = l.slow.count()
	s.Work = l.pool.stats()
	s.WaitByRoute = slices.Clone(s.WaitByRoute) // the loop's is shared by every snapshot
	return s
}

// Utilization returns the share of time the loop was busy between prev and
// s, two Stats taken from the same Server (prev earlier), from 0 (idle)
// to 1 (busy all the time), as Node's eventLoopUtilization(prev): busy time
// is everything the loop did outside its wait for events (handlers,
// timers, posted functions, reads, writes, the access log). With a zero
// prev it is the utilization since the loop started. It returns 0 when no
// time passed between them.
func (s Stats) Utilization(prev Stats) float64 {
	elapsed := s.LoopElapsed - prev.LoopElapsed
	if elapsed <= 0 {
		return 0
	}
	return min(max(float64(s.LoopBusy-prev.LoopBusy)/float64(elapsed), 0), 1)
}
