package gameserver

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Turn figures.
const (
	slowTurn   = 10 * time.Millisecond // a turn longer than this is counted in Stats.SlowTurns
	turnWindow = 10 * time.Second      // Stats.LongestTurnRecent covers the current and the previous window
)

// counters are the loop's running totals, in plain fields: only the loop
// touches them. publish copies them for Stats once per loop turn, so
// counting costs no atomic operation per request.
type counters struct {
	open           int
	accepted       uint64
	rejected       uint64
	requests       uint64
	bytesRead      uint64
	bytesWritten   uint64
	turns          uint64
	busy           time.Duration
	slowTurns      uint64
	longest        time.Duration // longest turn since start
	longestCur     time.Duration // longest turn of the current window
	longestPrev    time.Duration // longest turn of the previous window
	window         int64         // loop clock at which the current window began
	deferred       int           // responses deferred now
	streams        int           // event streams open now
	streamsCut     uint64
	streamsRefused uint64
	byClass        [6]uint64 // responses ended, by status class (status/100)
}

// countResponse counts a response that ended with status.
func (s *counters) countResponse(status int) {
	s.byClass[min(max(status/100, 0), 5)]++
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
	s.turns++
	d := time.Since(l.turnWall)
	s.busy += d
	if d > slowTurn {
		s.slowTurns++
	}
	s.longest = max(s.longest, d)
	l.lag.turns.record(d)
	if now := l.now; now-s.window >= int64(turnWindow) {
		s.longestPrev = s.longestCur
		if now-s.window >= 2*int64(turnWindow) {
			s.longestPrev = 0
		}
		s.longestCur, s.window = 0, now
	}
	s.longestCur = max(s.longestCur, d)
	l.budget.release()
	l.publish()
	l.pub.turnStart.Store(0)
}

// publish makes the loop's counters visible to Stats.
func (l *loop) publish() {
	s := &l.count
	l.pub.mu.Lock()
	l.pub.snap = Stats{
		OpenConns:         s.open,
		AcceptedConns:     s.accepted,
		RejectedConns:     s.rejected,
		Requests:          s.requests,
		BytesRead:         s.bytesRead,
		BytesWritten:      s.bytesWritten,
		LoopBusy:          s.busy,
		LoopTurns:         s.turns,
		SlowTurns:         s.slowTurns,
		LongestTurn:       s.longest,
		LongestTurnRecent: max(s.longestCur, s.longestPrev),
		Lag:               l.lag.sum,
		Turns:             l.lag.turnSum,
		QueuedOutput:      l.budget.mem,
		Deferred:          s.deferred,
		Streams:           s.streams,
		StreamsCut:        s.streamsCut,
		StreamsRefused:    s.streamsRefused,
		Responses:         s.byClass,
	}
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
	s.SlowRequests = l.slow.count()
	s.Work = l.pool.stats()
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
