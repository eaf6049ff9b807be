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
func (c *core) startTurn(wall time.Time) {
	c.now = int64(wall.Sub(c.epoch))
	c.turnWall = wall
	c.pub.turnStart.Store(c.now + 1)
	if c.turn == 0 {
		c.pub.started.Store(c.now + 1)
	}
	c.turn++
	if sec := wall.Unix(); sec != c.dateSec {
		c.dateSec = sec
		c.dateField = append(c.dateField[:0], "Date: "...)
		c.dateField = wall.UTC().AppendFormat(c.dateField, http.TimeFormat)
		c.dateField = append(c.dateField, "\r\n"...)
		if c.access != nil {
			c.access.setDate(wall)
		}
	}
}

// endTurn ends a loop turn, in either back end: it writes the turn's
// access log lines, counts the turn and its busy time (the access log
// write included, as Node's eventLoopUtilization counts everything
// outside the wait) and publishes the counters, before the loop waits for
// the next events.
func (c *core) endTurn() {
	if c.access != nil {
		if err := c.access.flush(); err != nil {
			c.cfg.Logger.Error("gameserver: access log", "err", err)
		}
	}
	s := &c.count
	s.turns++
	d := time.Since(c.turnWall)
	s.busy += d
	if d > slowTurn {
		s.slowTurns++
	}
	s.longest = max(s.longest, d)
	c.lag.turns.record(d)
	if now := c.now; now-s.window >= int64(turnWindow) {
		s.longestPrev = s.longestCur
		if now-s.window >= 2*int64(turnWindow) {
			s.longestPrev = 0
		}
		s.longestCur, s.window = 0, now
	}
	s.longestCur = max(s.longestCur, d)
	c.budget.release()
	c.publish()
	c.pub.turnStart.Store(0)
}

// publish makes the loop's counters visible to Stats.
func (c *core) publish() {
	s := &c.count
	c.pub.mu.Lock()
	c.pub.snap = Stats{
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
		Lag:               c.lag.sum,
		Turns:             c.lag.turnSum,
		QueuedOutput:      c.budget.mem,
		Deferred:          s.deferred,
		Streams:           s.streams,
		StreamsCut:        s.streamsCut,
		StreamsRefused:    s.streamsRefused,
		Responses:         s.byClass,
	}
	c.pub.mu.Unlock()
}

// markStopped records when the loop stopped, for LoopElapsed.
func (c *core) markStopped() {
	c.pub.stopped.CompareAndSwap(0, c.clock()+1)
}

// stats returns the last published snapshot (Server.Stats), with the
// figures that need no loop brought up to now: the busy time of a turn in
// progress, the elapsed time, the slow-request count and the worker pool.
func (c *core) stats() Stats {
	c.pub.mu.Lock()
	s := c.pub.snap
	c.pub.mu.Unlock()
	now := c.clock()
	if t := c.pub.stopped.Load(); t != 0 {
		now = t - 1
	} else if t := c.pub.turnStart.Load(); t != 0 {
		s.LoopBusy += time.Duration(max(now-(t-1), 0))
	}
	if t := c.pub.started.Load(); t != 0 {
		s.LoopElapsed = time.Duration(max(now-(t-1), 0))
	}
	s.SlowRequests = c.slow.count()
	s.Work = c.pool.stats()
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
