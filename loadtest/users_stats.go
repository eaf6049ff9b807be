package loadtest

import (
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DeliveryStep is the name under which event delivery is reported and
// thresholds name it ("delivery.p99<1s"): from the write that caused an
// event (User.Cause) to the event's arrival at each stream.
const DeliveryStep = "delivery"

// UsersResult is what RunUsers measured.
type UsersResult struct {
	Arrival   Arrival
	Hold      time.Duration
	Window    time.Duration
	StartedAt time.Time
	TimeTaken time.Duration
	Users     int   // users that arrived
	Failed    int64 // users whose scenario returned an error
	// Steps are the steps' figures, by name; Delivery is event delivery's.
	Steps    []StepResult
	Delivery StepResult
	Events   int64 // events received, every stream's
	// Errors holds the first error each step met (and "scenario": the
	// first a scenario returned), for the report.
	Errors map[string]string
	// Windows are the run's windows in order (UsersConfig.Window each);
	// UserSeconds is their UserSeconds summed.
	Windows     []Window
	UserSeconds float64
	// Broke is the StopWhen threshold that failed, with the step it
	// failed for ("" when none did), in window BrokeAt.
	Broke   string
	BrokeAt int
	// Loop is the server loop's figures over the run (MetricsURL).
	Loop *LoopFigures
	// Client is the load generator's own CPU over the run: this process's
	// (RunUsers's caller's: a process that also serves counts that too).
	Client ClientCPU

	// intervals are each step's windows' histograms, stamped, by step
	// name (UsersConfig.Timeline).
	intervals map[string][]*hdrhistogram.Histogram
}

// StepResult is one step's figures over the run. Latency counts from when
// the user began the step: waiting for a connection and dialing are in
// it (corrected); Uncorrected counts from when the request had its
// connection, as ab does. Lateness is how late the load generator began
// steps after they were due (its own delay: a busy machine, never the
// server's), which is not in Latency.
type StepResult struct {
	Name         string
	Count        int64 // steps that ended, errors included
	Errors       int64
	Rate         float64 // steps per second of the run
	Latency      Phase
	Percentiles  []Percentile // ab's rows, 50% to 100%
	Distribution []Percentile // HdrHistogram's distribution, for the HTML curve
	Uncorrected  []Percentile
	LatenessP99  time.Duration
	LatenessMax  time.Duration
	// StatusCodes counts the step's responses by status, every status
	// (a stream's: its response's; none for delivery or a Wait).
	StatusCodes map[int]int64

	hist *hdrhistogram.Histogram // Latency's, in microseconds
}

// Window is one window of the run (UsersConfig.Window).
type Window struct {
	At      time.Duration // the window's end from the start of the run
	Length  time.Duration // how long it lasted
	Users   int           // arrived by its end
	Active  int           // running at its end
	Streams int           // open at its end
	Events  int64         // received in it
	// UserSeconds is the users running over the window times its length:
	// the mean of Active at its start (the previous window's end, 0 for
	// the first) and at its end, times Length.
	UserSeconds float64
	Steps       []WindowStep // the steps that ended in it, by name
	// Delivery is event delivery in it.
	Delivery WindowStep
	// From the server's metrics over the window: the loop's figures, the
	// requests it served per second (gameserver_requests_total) and its longest turn
	// of the last 10 to 20 s (gameserver_loop_longest_turn_recent_seconds).
	Loop              *LoopFigures
	ServerRequests    float64
	LongestTurnRecent time.Duration
	// ClientCPU is the load generator's own CPU in the window (this
	// process's, getrusage); Known false where it cannot be read.
	ClientCPU ClientCPU
}

// ClientCPU is the CPU time, user and system, the load generator's process
// used over a span (getrusage(RUSAGE_SELF)), and the cores it may run on.
// Known is false where the platform cannot say (no getrusage): the figure
// is then unknown, not zero.
type ClientCPU struct {
	CPU   time.Duration
	Cores int // runtime.NumCPU(): the cores the process may use (its CPU affinity)
	Known bool
	// Share is CPU's share of the Cores over the span measured (the run,
	// or the window): 1 is every core the process may use busy the whole
	// span; 0 when unknown.
	Share float64
}

// CoresText is the cores the process may use in words: "1 core", "3 cores".
func (c ClientCPU) CoresText() string {
	if c.Cores == 1 {
		return "1 core"
	}
	return fmt.Sprintf("%d cores", c.Cores)
}

// WindowStep is a step's figures in one window.
type WindowStep struct {
	Step                     string
	Count, Errors            int64
	P50, P90, P99, P999, Max time.Duration
}

// Step returns the figures of step name in w (zero if none ended in it).
func (w *Window) Step(name string) WindowStep {
	if name == DeliveryStep {
		return w.Delivery
	}
	for _, s := range w.Steps {
		if s.Step == name {
			return s
		}
	}
	return WindowStep{Step: name}
}

// Step returns the figures of step name (zero if it never ran).
func (r *UsersResult) Step(name string) StepResult {
	if name == DeliveryStep {
		return r.Delivery
	}
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	return StepResult{Name: name}
}

// stepStats accumulates one step's figures; safe for concurrent use.
type stepStats struct {
	name string
	json []byte // name as a JSON string, for the request log
	mu   sync.Mutex
	lat  *phase // corrected
	unc  *hdrhistogram.Histogram
	lt   *hdrhistogram.Histogram // lateness
	errs int64
	// statuses counts responses by status.
	statuses map[int]int64
	// The current window's, and with keep the past windows' histograms.
	win           *hdrhistogram.Histogram
	winN, winErrs int64
	keep          bool
	wins          []*hdrhistogram.Histogram
}

// newStepStats makes a step's figures; keep keeps each window's
// histogram.
func newStepStats(name string, keep bool) *stepStats {
	return &stepStats{name: name, json: jsonString(name), lat: newPhase(), unc: hdrhistogram.New(histLowest, histHighest, histDigits),
		lt: hdrhistogram.New(histLowest, histHighest, timelineDigits), win: newTimelineHist(), keep: keep}
}

func (s *stepStats) late(d time.Duration) {
	s.mu.Lock()
	_ = s.lt.RecordValue(min(max(d.Microseconds(), 0), histHighest))
	s.mu.Unlock()
}

// record adds one step that took latency (uncorrected: unc), failed or
// not, its response's status (0: none).
func (s *stepStats) record(latency, unc time.Duration, status int, failed bool) {
	us := latency.Microseconds()
	s.mu.Lock()
	if status > 0 {
		if s.statuses == nil {
			s.statuses = map[int]int64{}
		}
		s.statuses[status]++
	}
	s.lat.record(us)
	_ = s.unc.RecordValue(min(max(unc.Microseconds(), 0), histHighest))
	_ = s.win.RecordValue(min(max(us, 0), histHighest))
	s.winN++
	if failed {
		s.errs++
		s.winErrs++
	}
	s.mu.Unlock()
}

// fail counts an error without a latency.
func (s *stepStats) fail() {
	s.mu.Lock()
	s.errs++
	s.winErrs++
	s.mu.Unlock()
}

// closeWindow returns the figures of the window from..to and starts the
// next.
func (s *stepStats) closeWindow(from, to time.Time) WindowStep {
	s.mu.Lock()
	h, n, e := s.win, s.winN, s.winErrs
	s.win, s.winN, s.winErrs = newTimelineHist(), 0, 0
	if s.keep {
		s.wins = append(s.wins, stamped(h, from, to))
	}
	s.mu.Unlock()
	w := WindowStep{Step: s.name, Count: n, Errors: e}
	if h.TotalCount() > 0 {
		w.P50, w.P90, w.P99 = usec(h.ValueAtPercentile(50)), usec(h.ValueAtPercentile(90)), usec(h.ValueAtPercentile(99))
		w.P999, w.Max = usec(h.ValueAtPercentile(99.9)), usec(h.Max())
	}
	return w
}

// keepTail keeps what ended after the last window, from..to, as one more
// interval histogram, if anything did.
func (s *stepStats) keepTail(from, to time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keep && s.win.TotalCount() > 0 {
		s.wins = append(s.wins, stamped(s.win, from, to))
		s.win = newTimelineHist()
	}
}

func (s *stepStats) result(elapsed time.Duration) StepResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := StepResult{Name: s.name, Count: s.lat.count, Errors: s.errs, Latency: s.lat.figures(),
		Percentiles: percentileTable(s.lat), Distribution: distribution(s.lat), StatusCodes: maps.Clone(s.statuses), hist: s.lat.hist}
	if elapsed > 0 {
		r.Rate = float64(r.Count) / elapsed.Seconds()
	}
	if s.unc.TotalCount() > 1 {
		for _, pm := range percentiles {
			v := s.unc.Max()
			if pm < 10000 {
				v = s.unc.ValueAtPercentile(float64(pm) / 100)
			}
			r.Uncorrected = append(r.Uncorrected, Percentile{Percent: float64(pm) / 100, Latency: usec(v)})
		}
	}
	if s.lt.TotalCount() > 0 {
		r.LatenessP99, r.LatenessMax = usec(s.lt.ValueAtPercentile(99)), usec(s.lt.Max())
	}
	return r
}

// fill writes the run's totals into res.
func (r *usersRun) fill(res *UsersResult) {
	res.Users, res.Failed, res.Events = int(r.arrived.Load()), r.failed.Load(), r.events.Load()
	for _, w := range res.Windows {
		res.UserSeconds += w.UserSeconds
	}
	r.mu.Lock()
	for _, st := range r.steps {
		res.Steps = append(res.Steps, st.result(res.TimeTaken))
		if st.keep {
			res.intervals[st.name] = st.wins
		}
	}
	r.mu.Unlock()
	if r.delivery.keep {
		res.intervals[DeliveryStep] = r.delivery.wins
	}
	slices.SortFunc(res.Steps, func(a, b StepResult) int { return strings.Compare(a.Name, b.Name) })
	res.Delivery = r.delivery.result(res.TimeTaken)
	r.errMu.Lock()
	res.Errors = r.firstErr
	r.errMu.Unlock()
	if res.Broke == "" {
		res.BrokeAt = -1
	}
}

// windower cuts the run into windows.
type windower struct {
	r      *usersRun
	last   *snapshot
	events int64
	at     time.Duration // the last window's end
	active int           // users running at the last window's end
	cpu    ClientCPU     // the process's CPU at the last window's end
}

func newWindower(r *usersRun, before *snapshot) *windower {
	return &windower{r: r, last: before, cpu: clientCPUNow()}
}

// clientCPUNow is this process's CPU so far.
func clientCPUNow() ClientCPU {
	d, ok := processCPU()
	return ClientCPU{CPU: d, Cores: runtime.NumCPU(), Known: ok}
}

// since is the CPU used from then to c, a span of length d.
func (c ClientCPU) since(then ClientCPU, d time.Duration) ClientCPU {
	u := ClientCPU{CPU: max(c.CPU-then.CPU, 0), Cores: c.Cores, Known: c.Known && then.Known}
	if u.Known && d > 0 && u.Cores > 0 {
		u.Share = u.CPU.Seconds() / d.Seconds() / float64(u.Cores)
	}
	return u
}

// close ends the current window and returns its figures.
func (w *windower) close(ctx context.Context) Window {
	r := w.r
	ev := r.events.Load()
	win := Window{At: time.Since(r.start), Users: int(r.arrived.Load()), Active: int(r.active.Load()),
		Streams: int(r.streams.Load()), Events: ev - w.events}
	w.events = ev
	win.Length, w.at = win.At-w.at, win.At
	win.UserSeconds, w.active = float64(w.active+win.Active)/2*win.Length.Seconds(), win.Active
	cpu := clientCPUNow()
	win.ClientCPU, w.cpu = cpu.since(w.cpu, win.Length), cpu
	from, to := r.start.Add(win.At-win.Length), r.start.Add(win.At)
	r.mu.Lock()
	for _, st := range r.steps {
		win.Steps = append(win.Steps, st.closeWindow(from, to))
	}
	r.mu.Unlock()
	slices.SortFunc(win.Steps, func(a, b WindowStep) int { return strings.Compare(a.Step, b.Step) })
	win.Delivery = r.delivery.closeWindow(from, to)
	if r.cfg.MetricsURL != "" && w.last != nil {
		if s, err := scrape(ctx, r.cfg.MetricsURL); err == nil {
			win.Loop = loopBetween(w.last, s)
			if el := s.at.Sub(w.last.at).Seconds(); el > 0 && !math.IsNaN(s.requests) && !math.IsNaN(w.last.requests) {
				win.ServerRequests = (s.requests - w.last.requests) / el
			}
			if !math.IsNaN(s.longestRecent) {
				win.LongestTurnRecent = seconds(s.longestRecent)
			}
			w.last = s
		} else {
			win.Loop = &LoopFigures{Error: err.Error()}
		}
	}
	return win
}

// keepTails keeps, with UsersConfig.Timeline, what ended after the last
// window in each step's intervals: the interval log covers the whole run.
func (w *windower) keepTails() {
	r := w.r
	if !r.cfg.Timeline {
		return
	}
	from, to := r.start.Add(w.at), time.Now()
	r.mu.Lock()
	for _, st := range r.steps {
		st.keepTail(from, to)
	}
	r.mu.Unlock()
	r.delivery.keepTail(from, to)
}

// checkWindow returns the first threshold of ts that fails in w, with the
// step it fails for, or "".
func checkWindow(ts []Threshold, w *Window) string {
	for _, t := range ts {
		for _, name := range t.steps(w.stepNames()) {
			s := w.Step(name)
			if got := t.measureWindow(s, w); !t.holds(got) {
				return fmt.Sprintf("%s (%s: %s)", t.Expr, name, t.unitValue(got))
			}
		}
	}
	return ""
}

func (w *Window) stepNames() []string {
	names := make([]string, 0, len(w.Steps))
	for _, s := range w.Steps {
		names = append(names, s.Step)
	}
	return names
}

// causeMap holds the writes' times by key (User.Cause), and the arrivals
// of events whose Cause has not come yet, sharded so that thousands of
// streams look them up at once.
type causeMap struct {
	ttl    time.Duration
	seed   maphash.Seed
	shards [64]causeShard
}

type causeShard struct {
	mu      sync.Mutex
	m       map[string]time.Time
	pending map[string][]time.Time // arrivals of keys not caused yet
	swept   time.Time
}

// maxPending bounds the arrivals kept for one key not caused yet.
const maxPending = 1 << 16

func newCauseMap(ttl time.Duration) *causeMap {
	c := &causeMap{ttl: ttl, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m, c.shards[i].pending = map[string]time.Time{}, map[string][]time.Time{}
	}
	return c
}

func (c *causeMap) shard(key []byte) *causeShard {
	return &c.shards[maphash.Bytes(c.seed, key)%uint64(len(c.shards))]
}

// put records key's write at at and returns the arrivals of its events
// that came before it and after at.
func (c *causeMap) put(key string, at time.Time) []time.Time {
	sh := c.shard([]byte(key))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.m[key] = at
	var out []time.Time
	for _, t := range sh.pending[key] {
		if !t.Before(at) && t.Sub(at) <= c.ttl {
			out = append(out, t)
		}
	}
	delete(sh.pending, key)
	sh.sweep(at, c.ttl)
	return out
}

// delay is how long after its cause an event of key arrived at at: false
// when no write of key is known (the arrival is then kept for a Cause to
// come), or it is older than the TTL, or later than at.
func (c *causeMap) delay(key []byte, at time.Time) (time.Duration, bool) {
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	t, ok := sh.m[string(key)]
	d := at.Sub(t)
	if ok && d >= 0 && d <= c.ttl {
		return d, true
	}
	if p := sh.pending[string(key)]; len(p) < maxPending {
		sh.pending[string(key)] = append(p, at)
	}
	sh.sweep(at, c.ttl)
	return 0, false
}

// sweep drops, once per TTL, the writes and arrivals older than the TTL.
func (sh *causeShard) sweep(now time.Time, ttl time.Duration) {
	if now.Sub(sh.swept) < ttl {
		return
	}
	sh.swept = now
	for k, t := range sh.m {
		if now.Sub(t) > ttl {
			delete(sh.m, k)
		}
	}
	for k, p := range sh.pending {
		if len(p) == 0 || now.Sub(p[len(p)-1]) > ttl {
			delete(sh.pending, k)
		}
	}
}
