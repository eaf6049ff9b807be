package gameserver

import (
	"sync"
	"time"
)

// counters are the loop's running totals, in plain fields: only the loop
// touches them. publish copies them for Stats once per loop turn, so
// counting costs no atomic operation per request.
type counters struct {
	open         int
	accepted     uint64
	rejected     uint64
	requests     uint64
	bytesRead    uint64
	bytesWritten uint64
	turns        uint64
	busy         time.Duration
	deferred     int // responses deferred now
	streams      int // event streams open now
	streamsCut   uint64
}

// statsBox is the snapshot other goroutines read; the lock is held only to
// copy it, never while the loop waits.
type statsBox struct {
	mu   sync.Mutex
	snap Stats
}

// endTurn ends a loop turn, in either back end: it counts the turn, writes
// the turn's access log lines and publishes the counters, before the loop
// waits for the next events.
func (c *core) endTurn() {
	c.count.turns++
	if c.access != nil {
		if err := c.access.flush(); err != nil {
			c.cfg.Logger.Error("gameserver: access log", "err", err)
		}
	}
	c.publish()
}

// publish makes the loop's counters visible to Stats.
func (c *core) publish() {
	s := &c.count
	c.pub.mu.Lock()
	c.pub.snap = Stats{
		OpenConns:     s.open,
		AcceptedConns: s.accepted,
		RejectedConns: s.rejected,
		Requests:      s.requests,
		BytesRead:     s.bytesRead,
		BytesWritten:  s.bytesWritten,
		LoopBusy:      s.busy,
		LoopTurns:     s.turns,
		Deferred:      s.deferred,
		Streams:       s.streams,
		StreamsCut:    s.streamsCut,
	}
	c.pub.mu.Unlock()
}

// stats returns the last published snapshot (Server.Stats). It lags the
// loop by at most the turn in progress.
func (c *core) stats() Stats {
	c.pub.mu.Lock()
	defer c.pub.mu.Unlock()
	return c.pub.snap
}
