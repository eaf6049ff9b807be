package gameserver

import (
	"slices"
	"strings"
	"time"
)

// WaitStats is the loop's account of why requests waited for their
// handler (Stats.Wait), which no client can see from outside: from the
// moment a request was ready (see below) to the start of its handler,
// how much of the time the loop ran other work (head-of-line blocking:
// the server's doing) and how much its thread was runnable but not on a
// CPU (run-queue delay, preemption: the machine's doing), with the
// handler's own time beside them.
//
// A request is ready from the moment the kernel received its last bytes
// (their receive timestamp, SO_TIMESTAMPNS, read in sampled turns): when
// that is before the kernel's wake-up of the turn that read it, the loop
// was running earlier turns' work, which the request waited behind. When
// the loop was waiting for events instead, or the platform gives no
// timestamp, it is ready from that wake-up (the loop's wait for a CPU
// after the wake-up is the machine's), or, if a turn past its budget
// left it to the next (see the package doc's Fairness), from that
// turn's wake-up at the latest. One that waited its turn behind
// an earlier request of its connection (see the package doc's Fairness)
// is ready from when the loop queued it. Its wait ends when its
// handler starts (a prepared response's bytes are queued). Time the
// thread was off a CPU for the process's own reasons (the garbage
// collector stopping the world, the Go scheduler giving the loop's P to
// another goroutine, a handler before it blocked on a disk) counts as
// head-of-line: the process's doing, not the machine's. The wait for a
// CPU, though, is whoever held the CPU, the process's own other threads
// (the worker pool, a metrics server) included: Config.LoopCPUs keeps
// them off the loop's CPU.
//
// The figures come from the kernel's per-thread account
// (/proc/thread-self/schedstat: the time the thread ran and the time it
// waited for a CPU), which costs a system call to read, so the loop
// samples turns: every turn while the loop turns fewer than about a
// thousand times a second (a loop busy enough to make requests wait,
// whose turns last a millisecond or more, included), otherwise one turn
// in N, N set every 100 ms from the rate of turns, so that a fast loop
// pays for about a thousand samples a second. Which turn is sampled
// depends on nothing the turn holds, so the sample is a fair one. In a
// sampled turn the loop reads the account before its wait for events,
// at the turn's start and end, and at the start of a handler half a
// millisecond or more after the last reading; every request of the turn
// is attributed, its wait for a CPU read off the readings (interpolated
// between the two around its handler's start, so within half a
// millisecond of the truth). A request that arrived or was queued in an
// earlier turn has the part of its wait before this turn attributed at
// this turn's share. A
// deferred response's finish function is not attributed (its request
// was, when its handler ran).
//
// Where the platform keeps no per-thread figures (the portable back end,
// or a Linux kernel without schedstat), Known is false and every other
// field is unknown, not zero: exporters leave them out.
type WaitStats struct {
	// Known reports whether the loop attributes waits at all (see
	// above). When false, the other fields are unknown and zero.
	Known bool

	// HeadOfLine is the histogram of the attributed requests' wait while
	// the loop ran other work; CPUWait of their wait while the loop's
	// thread waited for a CPU; Handler of their handlers' own time (wall
	// time, as the slow-request log's Duration). Each has one sample per
	// attributed request. They are refreshed 20 ms after the first
	// request attributed since the last refresh.
	HeadOfLine LagStats
	CPUWait    LagStats
	Handler    LagStats

	// LoopCPU is the time the loop's thread ran on a CPU since the loop
	// started, and LoopCPUWait the time it was runnable but waiting for
	// one, as of the last sampled turn. Between two Stats their
	// increases give the share of its time the loop waited for a CPU
	// (Stats.CPUWaitShare): near 0 on a machine with a core to spare for
	// it, about a half with one busy thread beside it on its core.
	LoopCPU     time.Duration
	LoopCPUWait time.Duration
}

// RouteWaits is WaitStats's histograms for the requests one route served
// (Stats.WaitByRoute).
type RouteWaits struct {
	// Route is the http.ServeMux pattern that served the requests, as
	// the mux set it on the Request the Handler was given
	// (Request.Pattern): "GET /items/{id}". "" gathers the requests no
	// pattern served (a Handler that is no ServeMux, a middleware that
	// passed the mux a copy of the Request, no match), prepared
	// responses, and the requests of patterns beyond the first 64.
	Route      string
	HeadOfLine LagStats
	CPUWait    LagStats
	Handler    LagStats
}

// CPUWaitShare returns the share of the time the loop's thread wanted to
// run between prev and s, two Stats of the same Server (prev earlier),
// that it spent waiting for a CPU: the increase of Wait.LoopCPUWait over
// that of LoopCPU plus LoopCPUWait, from 0 (it always had one) to 1. ok is
// false when it is unknown (Wait.Known is false) or the thread did not
// run in between. With a zero prev it is the share since the loop
// started.
func (s Stats) CPUWaitShare(prev Stats) (share float64, ok bool) {
	if !s.Wait.Known {
		return 0, false
	}
	wait := s.Wait.LoopCPUWait - prev.Wait.LoopCPUWait
	ran := s.Wait.LoopCPU - prev.Wait.LoopCPU
	if wait < 0 || ran < 0 || wait+ran <= 0 {
		return 0, false
	}
	return float64(wait) / float64(wait+ran), true
}

// Wait attribution's settings.
const (
	waitSampleRate   = 1000                   // turns sampled a second, at most (about)
	waitSamplePeriod = 100 * time.Millisecond // how often the share of turns sampled is set
	waitPointGap     = 500 * time.Microsecond // a handler start this long after the last reading is read too
	waitPublishEvery = 20 * time.Millisecond  // how long new samples wait before the summaries are refreshed for Stats
	maxWaitRoutes    = 64                     // routes with histograms of their own; the rest share ""
)

// threadSample is one reading of the loop thread's scheduler account, in
// nanoseconds: time on a CPU, time runnable but waiting for one.
type threadSample struct{ cpu, delay int64 }

// waitPoint is a reading of a sampled turn: the loop clock, and the
// thread's wait for a CPU so far.
type waitPoint struct{ at, delay int64 }

// waitRec is one request of a sampled turn, attributed at the turn's
// end, once the readings around its handler's start are known.
type waitRec struct {
	ready, start, end int64  // loop clock: ready, handler started, handler returned
	queued            bool   // ready from an earlier turn (queued, or arrived during one), not at this turn's wake-up
	route             string // its Request.Pattern
	fixed             bool   // hol and cpu are set already (a slow request, see loop.attributeSlow)
	hol, cpu          int64
}

// waitHists are the three histograms of one route, or of all requests,
// with their summaries as of the last publication.
type waitHists struct {
	hol, cpu, handler lagHist
	sum               [3]LagStats
	dirty             bool
}

func (h *waitHists) add(hol, cpu, handler int64) {
	h.hol.record(time.Duration(hol))
	h.cpu.record(time.Duration(cpu))
	h.handler.record(time.Duration(handler))
	h.dirty = true
}

// summarize refreshes h's summaries if it has new samples.
func (h *waitHists) summarize() {
	if h.dirty {
		h.dirty = false
		h.sum = [3]LagStats{h.hol.summary(), h.cpu.summary(), h.handler.summary()}
	}
}

// waitAttrib is the loop's wait attribution (WaitStats). Only the loop
// touches it.
type waitAttrib struct {
	clock    threadClock
	known    bool    // clock is readable: the loop attributes
	share    float64 // of the turns to sample, 0 to 1, set every waitSamplePeriod
	credit   float64 // share accumulated: a turn is sampled when it reaches 1
	period   int64   // loop clock at the start of the current waitSamplePeriod
	turns    int     // turns ended in the current waitSamplePeriod
	sampled  int     // turns sampled in it
	on       bool    // this turn is sampled
	armed    bool    // the next turn is sampled: before holds the reading before its wait
	pubArmed bool    // a timer will publish the summaries (publishWaits)
	wake     int64   // CPU wait between the reading before this turn's wait and its start
	base     threadSample
	before   threadSample
	latest   threadSample // the last reading, for LoopCPU and LoopCPUWait
	// prevStart and prevEnd are the first and last readings of the
	// turn before this one, when it was sampled (prevOK), for the part
	// of a request's wait that fell in it (earlierDelay).
	prevStart, prevEnd waitPoint
	prevOK             bool

	points []waitPoint // this turn's readings, in order: its start, some handler starts, its end
	recs   []waitRec   // this turn's requests, in the order their handlers started
	all    waitHists
	routes map[string]*waitHists

	sum     WaitStats    // published with Stats
	byRoute []RouteWaits // published with Stats; never changed once published
}

// openWaits starts the attribution on the loop's thread, if the platform
// can tell (see WaitStats.Known).
func (l *loop) openWaits() {
	w := &l.wait
	if !w.clock.open() {
		return
	}
	w.base, _ = w.clock.read()
	w.before, w.latest = w.base, w.base
	w.known, w.share = true, 1
	w.routes = make(map[string]*waitHists)
	w.sum.Known = true
	w.armed = true // the first turn is sampled
}

// closeWaits ends the attribution when the loop stops.
func (l *loop) closeWaits() {
	l.wait.clock.close()
	l.wait.on, l.wait.armed = false, false
}

// readPoint reads the thread's account at at (loop clock), for the turn
// being sampled, and reports whether it could.
func (w *waitAttrib) readPoint(at int64) bool {
	s, ok := w.clock.read()
	if ok {
		w.latest = s
		w.points = append(w.points, waitPoint{at: at, delay: s.delay})
	}
	return ok
}

// beginWaitTurn starts a turn's sample, if the previous turn armed one:
// the CPU wait since the reading before the wait for events is the
// turn's wake-up delay.
func (l *loop) beginWaitTurn() {
	w := &l.wait
	if !w.armed {
		return
	}
	w.armed = false
	w.points = w.points[:0]
	if w.on = w.readPoint(l.now); w.on {
		w.wake = max(w.latest.delay-w.before.delay, 0)
	}
}

// noteHandlerStart reads the thread's account at a handler's start (loop
// clock) in a sampled turn, if waitPointGap has passed since the last
// reading.
func (l *loop) noteHandlerStart(start int64) {
	w := &l.wait
	if n := len(w.points); n > 0 && start-w.points[n-1].at >= int64(waitPointGap) {
		w.readPoint(start)
	}
}

// endWaitTurn ends a turn of length d: a sampled turn's requests are
// attributed; the next turn is armed for sampling if its share of turns
// says so (sampleNext); and a refresh of the summaries for Stats is
// scheduled once there are new samples. It returns a sampled turn's own
// time (d less the thread's wait for a CPU during it; ok false for a
// turn not sampled).
func (l *loop) endWaitTurn(d time.Duration) (own time.Duration, ok bool) {
	w := &l.wait
	if !w.known {
		return 0, false
	}
	end := l.now + int64(d)
	read := false
	if w.on {
		w.on = false
		if read = w.readPoint(end); read {
			first, last := w.points[0], w.points[len(w.points)-1]
			own, ok = max(d-time.Duration(last.delay-first.delay), 0), true
			w.attribute(l.now)
			w.prevStart, w.prevEnd = w.points[0], w.points[len(w.points)-1]
		}
		clear(w.recs)
		w.recs = w.recs[:0]
	}
	w.prevOK = read
	if w.sampleNext(end) {
		if !read {
			w.latest, read = w.clock.read()
		}
		w.before, w.armed = w.latest, read
	}
	w.sum.LoopCPU = time.Duration(w.latest.cpu - w.base.cpu)
	w.sum.LoopCPUWait = time.Duration(w.latest.delay - w.base.delay)
	switch {
	case l.stopped:
		w.publish()
	case w.all.dirty && !w.pubArmed:
		w.pubArmed = true
		l.afterLoop(waitPublishEvery, l.publishWaits)
	}
	return own, ok
}

// sampleNext reports whether the turn after the one ending at end (loop
// clock) is sampled: every turn while the loop turns fewer than
// waitSampleRate times a second, one in N otherwise, N set every
// waitSamplePeriod from the turns of the period before (and no more
// than the period's budget when the rate jumps within it). The choice
// depends only on how many turns went before, never on what they held,
// so sampled turns are a fair sample.
func (w *waitAttrib) sampleNext(end int64) bool {
	w.turns++
	if end-w.period >= int64(waitSamplePeriod) {
		budget := waitSampleRate * float64(end-w.period) / float64(time.Second)
		w.share = min(budget/float64(w.turns), 1)
		w.period, w.turns, w.sampled = end, 0, 0
	}
	w.credit += w.share
	if w.credit < 1 || w.sampled >= waitSampleRate*int(waitSamplePeriod)/int(time.Second) {
		return false // a period whose rate jumped samples no more than its budget
	}
	w.credit--
	w.sampled++
	return true
}

// publishWaits refreshes the summaries for Stats (Server.Stats reads
// them at the end of the turn), waitPublishEvery after the first sample
// since the last refresh.
func (l *loop) publishWaits() {
	l.wait.pubArmed = false
	l.wait.publish()
}

// delayAt is the thread's wait for a CPU at t (loop clock) since the
// turn's start, interpolated between the readings around t; i is where
// to start looking (the readings before it are all at or before t), and
// the index to start from for a later t is returned.
func (w *waitAttrib) delayAt(t int64, i int) (int64, int) {
	p := w.points
	for i+1 < len(p)-1 && p[i+1].at <= t {
		i++
	}
	delay := p[i].delay
	if next := p[min(i+1, len(p)-1)]; next.at > p[i].at && t > p[i].at {
		delay += int64(float64(next.delay-p[i].delay) * float64(min(t, next.at)-p[i].at) / float64(next.at-p[i].at))
	}
	return delay - p[0].delay, i
}

// attribute records the turn that began at begin (loop clock): each
// request's wait since it was ready is its turn's wake-up delay (if it
// was read in this turn) and its wait in the turn until its handler
// started, and its CPU wait is what the readings say of those.
func (w *waitAttrib) attribute(begin int64) {
	p := w.points
	share := 0.0 // of the turn's time spent waiting for a CPU, for a queued request's earlier wait
	if last := p[len(p)-1]; last.at > p[0].at {
		share = min(max(float64(last.delay-p[0].delay)/float64(last.at-p[0].at), 0), 1)
	}
	i := 0
	for k := range w.recs {
		r := &w.recs[k]
		if !r.fixed {
			var inTurn int64
			inTurn, i = w.delayAt(r.start, i)
			r.hol, r.cpu = r.split(begin, w.wake, inTurn, w.earlierDelay(r, begin, share))
		}
		w.record(r.route, r.hol, r.cpu, r.end-r.start)
	}
}

// earlierDelay is the loop thread's wait for a CPU while r, ready from
// an earlier turn (queued), waited before the wake-up of the turn that
// began at begin (loop clock): where the turn before was sampled, its
// part of the wait read off that turn's readings (interpolated between
// its start and end), and the part before that turn, if r was ready
// earlier still (a request a turn past turnBudget left, after waiting
// through that turn too), taken at share, this turn's share of time
// spent waiting for a CPU; where it was not, the whole wait at share.
// 0 for a request ready at this turn's wake-up.
func (w *waitAttrib) earlierDelay(r *waitRec, begin int64, share float64) int64 {
	if !r.queued {
		return 0
	}
	s, e := w.prevStart, w.prevEnd
	if !w.prevOK || e.at <= s.at {
		return int64(share * float64(max(begin-r.ready-w.wake, 0)))
	}
	var before int64
	at := min(r.ready, e.at)
	if at < s.at {
		before = int64(share * float64(s.at-at))
		at = s.at
	}
	return before + e.delay - s.delay - int64(float64(e.delay-s.delay)*float64(at-s.at)/float64(e.at-s.at))
}

// split divides r's wait into head-of-line and CPU wait, given its
// turn's start (loop clock) and wake-up delay, the thread's CPU wait in
// the turn before r's handler started, and, for a request ready from an
// earlier turn (queued), the CPU wait before the wake-up while it waited
// (earlierDelay). A request read in the turn waited through the wake-up
// too; a queued one waited from an earlier turn, the wake-up included.
func (r *waitRec) split(begin, wake, inTurn, earlier int64) (hol, cpu int64) {
	waited := max(r.start-r.ready, 0)
	cpu = wake + inTurn
	if r.queued {
		cpu += earlier
	} else {
		waited += wake
	}
	cpu = min(max(cpu, 0), waited)
	return waited - cpu, cpu
}

// record adds one request's figures to the totals and its route's.
func (w *waitAttrib) record(route string, hol, cpu, handler int64) {
	w.all.add(hol, cpu, handler)
	h := w.routes[route]
	if h == nil {
		if len(w.routes) >= maxWaitRoutes {
			route = ""
			h = w.routes[route]
		}
		if h == nil {
			h = new(waitHists)
			w.routes[route] = h
		}
	}
	h.add(hol, cpu, handler)
}

// publish refreshes the summaries Stats carries, and rebuilds the routes'
// list when a route has new samples (the list published before is never
// changed: Stats callers may hold it).
func (w *waitAttrib) publish() {
	w.all.summarize()
	w.sum.HeadOfLine, w.sum.CPUWait, w.sum.Handler = w.all.sum[0], w.all.sum[1], w.all.sum[2]
	changed := false
	for _, h := range w.routes {
		changed = changed || h.dirty
		h.summarize()
	}
	if !changed {
		return
	}
	routes := make([]RouteWaits, 0, len(w.routes))
	for route, h := range w.routes {
		routes = append(routes, RouteWaits{Route: route, HeadOfLine: h.sum[0], CPUWait: h.sum[1], Handler: h.sum[2]})
	}
	slices.SortFunc(routes, func(a, b RouteWaits) int { return strings.Compare(a.Route, b.Route) })
	w.byRoute = routes
}

// noteWait adds a request of a sampled turn whose handler ran from start
// to end (loop clock) on c, and returns its record, valid until the next
// noteWait.
func (l *loop) noteWait(c *conn, start, end int64, route string) *waitRec {
	r := waitRec{ready: c.readyAt, queued: c.readyAt != 0, start: start, end: end, route: route}
	switch {
	case r.queued:
	case c.arrived > 0 && c.arrived < l.now-l.wait.wake:
		// It arrived before the wake-up of the turn that read it: the
		// loop was running earlier turns' work meanwhile, and it waited
		// from its arrival, as a queued request does.
		r.ready, r.queued = c.arrived, true
	default:
		r.ready = l.now
	}
	c.arrived = 0
	l.wait.recs = append(l.wait.recs, r)
	return &l.wait.recs[len(l.wait.recs)-1]
}

// maxArrivalAge is how long before a turn the kernel's receive timestamp
// of a request read in it may be: an older one is taken for a step of the
// wall clock the timestamp is on, and ignored.
const maxArrivalAge = int64(time.Minute)

// onLoopClock is unixNano, a wall-clock time of this turn or up to
// maxArrivalAge before it (a receive timestamp), on the loop clock, or 0
// when it is not in that span. The turn's start gives the offset between
// the two clocks.
func (l *loop) onLoopClock(unixNano int64) int64 {
	t := l.now + unixNano - l.turnWall.UnixNano()
	if t <= 0 || t < l.now-maxArrivalAge || t > l.clock() {
		return 0
	}
	return t
}

// attributeSlow attributes r, a slow request of the turn in progress, at
// once, for the slow-request log, which must not wait for the turn's
// end: from a reading now and those before its handler started. Its
// record keeps the same figures.
func (l *loop) attributeSlow(r *waitRec) (hol, cpu time.Duration, ok bool) {
	w := &l.wait
	if !w.readPoint(l.clock()) {
		return 0, 0, false
	}
	inTurn, _ := w.delayAt(r.start, 0)
	p := w.points
	share := min(max(float64(p[len(p)-1].delay-p[0].delay)/float64(max(p[len(p)-1].at-p[0].at, 1)), 0), 1)
	r.hol, r.cpu = r.split(l.now, w.wake, inTurn, w.earlierDelay(r, l.now, share))
	r.fixed = true
	return time.Duration(r.hol), time.Duration(r.cpu), true
}
