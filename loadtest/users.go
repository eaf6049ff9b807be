package loadtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Virtual users, as k6, Locust and Gatling have them: a Scenario is a
// function each user runs against a session of its own (a cookie jar),
// made of named steps (a GET, a form POST, a server-sent event stream
// opened or waited on) and think times. Users arrive on an open-loop
// schedule (Arrival) fixed before the run: a slow server cannot slow the
// arrivals, so it cannot hide its own slowness (coordinated omission).
// Each step's latency goes into its own HDR histogram, and the time from a
// write to the event it caused at each stream (User.Cause, StreamOptions.Key)
// into another.

// Scenario is what one virtual user does, from its arrival until it
// returns or ctx ends (the run's end). A returned error other than ctx's
// counts the user as failed (UsersResult.Failed); the run goes on. It runs
// on a goroutine of its own; u is its alone.
type Scenario func(ctx context.Context, u *User) error

// Arrival is an open-loop schedule of user arrivals: Rate users per second
// over Over (Rate*Over users in all), or, with Rate 0, a ramp: From users
// at once, then one at a time, evenly, up to To users by the end of Over.
type Arrival struct {
	Rate     float64       // users per second; 0: the ramp From -> To
	From, To int           // the ramp's first and last number of users
	Over     time.Duration // how long the arrivals last
}

// Users is how many users the schedule brings in all.
func (a Arrival) Users() int {
	if a.Rate > 0 {
		return int(a.Rate * a.Over.Seconds())
	}
	return a.To
}

// Due is when user i (from 0) arrives, from the start of the run.
func (a Arrival) Due(i int) time.Duration {
	if a.Rate > 0 {
		return time.Duration(float64(i) / a.Rate * float64(time.Second))
	}
	if i < a.From || a.To <= a.From {
		return 0
	}
	return time.Duration(float64(i-a.From+1) / float64(a.To-a.From) * float64(a.Over))
}

// At is how many users the schedule has brought by d from the start.
func (a Arrival) At(d time.Duration) int {
	switch {
	case d >= a.Over:
		return a.Users()
	case a.Rate > 0:
		return int(a.Rate*d.Seconds()) + 1
	case a.To <= a.From:
		return a.To
	}
	return a.From + int(float64(a.To-a.From)*float64(d)/float64(a.Over))
}

func (a Arrival) check() error {
	switch {
	case a.Over <= 0 && !(a.Rate == 0 && a.From == a.To):
		return fmt.Errorf("arrival: the arrivals' duration must be positive, got %v", a.Over)
	case a.Rate < 0 || math.IsNaN(a.Rate) || math.IsInf(a.Rate, 0):
		return fmt.Errorf("arrival: the rate must be a positive number of users per second, got %v", a.Rate)
	case a.Rate == 0 && (a.From < 0 || a.To < a.From || a.To == 0):
		return fmt.Errorf("arrival: a ramp goes from A >= 0 to B > 0 users, B >= A; got %d to %d", a.From, a.To)
	case a.Users() == 0:
		return errors.New("arrival: the schedule brings no user (rate times duration is below 1)")
	}
	return nil
}

// UsersConfig configures RunUsers.
type UsersConfig struct {
	// URL is the base every path of a step is resolved against:
	// http://host:port (https works through net/http's TLS).
	URL      string
	Arrival  Arrival
	Scenario Scenario
	// Hold is how long the run goes on after the last arrival; the run
	// then ends, ending every user's ctx. 0: until every user's scenario
	// has returned (or RunUsers's ctx ends).
	Hold time.Duration
	// Seed seeds each user's Rand (user i: Seed, i), so think times and
	// choices repeat from run to run.
	Seed uint64
	// Timeout bounds each request and each wait for an event; 0 means
	// 30 s. A step that times out counts as an error.
	Timeout time.Duration
	// Connections caps the connections the users' requests share (not the
	// streams, which have one each): a request waits for one to be free,
	// and that wait counts in its latency. 0: no cap (a new connection
	// whenever none is idle, as browsers each have their own).
	Connections int
	// Window is the length of the windows the run is cut into for its
	// timeline (UsersResult.Windows) and for StopWhen; 0 means 1 s.
	Window time.Duration
	// StopWhen ends the run at the end of the first window in which one
	// of them fails (UsersResult.Broke says which), checked on that
	// window's figures alone, after the run's first MinWindows windows.
	StopWhen   []Threshold
	MinWindows int
	// StopAfter is how many windows in a row must fail a StopWhen
	// threshold to end the run (a window's p99 of a few hundred values
	// is noisy on a busy machine); 0 means 1. Broke and BrokeAt then name
	// the first of them.
	StopAfter int
	// MetricsURL is the server's Prometheus endpoint (Config.MetricsURL):
	// scraped before and after the run and at the end of each window,
	// for the loop's figures of the run (UsersResult.Loop) and of each
	// window.
	MetricsURL string
	// MaxIdle is how many idle connections the shared pool keeps; 0 means
	// 1024.
	MaxIdle int
	// Timeline keeps each window's histogram of every step, for an
	// interval log (Print's HLog): a few kilobytes a step a window.
	Timeline bool
	// RequestLog, when set, gets one JSON line for each request, stream
	// opened and wait of the users (see reqlog.go), its step named.
	RequestLog io.Writer
	// BindAddrs, when set, are the local addresses users connect from:
	// user i's stream and the connections its requests dial from
	// BindAddrs[i % len] (127.0.0.2, 127.0.0.3, ... on loopback), for a
	// server that limits what one client address may hold (a request may
	// still reuse an idle connection another user dialed).
	BindAddrs []netip.Addr
}

// usersRun is one RunUsers: the users' shared state.
type usersRun struct {
	cfg       UsersConfig
	ctx       context.Context // the run's: ends when the run does
	base      *url.URL
	transport *http.Transport
	dialer    net.Dialer
	start     time.Time
	log       *requestLog // nil: none
	users     sync.WaitGroup

	mu    sync.Mutex
	steps map[string]*stepStats

	delivery *stepStats
	causes   *causeMap
	events   atomic.Int64 // events received by every stream
	streams  atomic.Int64 // streams open now
	active   atomic.Int64 // users running now
	arrived  atomic.Int64
	failed   atomic.Int64
	errMu    sync.Mutex
	firstErr map[string]string // the first error of each step, for the report
}

// defaultUserTimeout bounds a request or wait when UsersConfig.Timeout is 0.
const defaultUserTimeout = 30 * time.Second

// prepared checks cfg and fills in its defaults; base is its URL parsed.
func (cfg UsersConfig) prepared() (_ UsersConfig, base *url.URL, _ error) {
	if err := cfg.Arrival.check(); err != nil {
		return cfg, nil, err
	}
	if cfg.Scenario == nil {
		return cfg, nil, errors.New("users: no scenario")
	}
	base, err := url.Parse(cfg.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return cfg, nil, fmt.Errorf("users: the URL must be http://host[:port] or https://..., got %q", cfg.URL)
	}
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), defaultUserTimeout)
	cfg.Window = cmp.Or(max(cfg.Window, 0), time.Second)
	cfg.MaxIdle = cmp.Or(max(cfg.MaxIdle, 0), 1024)
	return cfg, base, nil
}

// newUsersRun makes a run's shared state and its connection pool.
func newUsersRun(ctx context.Context, cfg UsersConfig, base *url.URL) *usersRun {
	r := &usersRun{cfg: cfg, ctx: ctx, base: base, steps: map[string]*stepStats{}, firstErr: map[string]string{},
		causes: newCauseMap(cfg.Timeout), log: newRequestLog(cfg.RequestLog)}
	// No TCP keep-alive probes: four setsockopt calls fewer a connection
	// (a stream dials one per page view), and no probe packets for the
	// server to answer on the streams idle between events.
	r.dialer.KeepAlive = -1
	r.transport = &http.Transport{Proxy: nil, DialContext: r.dial, MaxIdleConns: cfg.MaxIdle,
		MaxIdleConnsPerHost: cfg.MaxIdle, MaxConnsPerHost: cfg.Connections, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ForceAttemptHTTP2: false}
	return r
}

// RunUsers runs cfg.Scenario for each user of cfg.Arrival, each arriving
// on schedule on a goroutine of its own, until the schedule and Hold are
// over (or a StopWhen threshold fails, or ctx ends), and returns the
// figures. The error is for a configuration that cannot run, a server
// whose metrics cannot be read at the start, or a RequestLog that could
// not be written (with the figures); what the users met is in the result.
func RunUsers(ctx context.Context, cfg UsersConfig) (*UsersResult, error) {
	cfg, base, err := cfg.prepared()
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := newUsersRun(runCtx, cfg, base)
	defer r.transport.CloseIdleConnections()
	var before *snapshot
	if cfg.MetricsURL != "" {
		if before, err = scrape(ctx, cfg.MetricsURL); err != nil {
			return nil, fmt.Errorf("users: metrics: %w", err)
		}
	}
	cpu0 := clientCPUNow()
	r.start = time.Now()
	r.delivery = newStepStats(DeliveryStep, cfg.Timeline)
	arrivals := make(chan struct{})
	go r.arrive(arrivals)
	res := &UsersResult{Arrival: cfg.Arrival, Hold: cfg.Hold, Window: cfg.Window, StartedAt: r.start,
		intervals: map[string][]*hdrhistogram.Histogram{}}
	w := newWindower(r, before)
	r.watch(ctx, res, w, r.allDone(arrivals))
	res.TimeTaken = time.Since(r.start)
	res.Client = clientCPUNow().since(cpu0, res.TimeTaken)
	cancel()
	<-arrivals // no user arrives after RunUsers returns
	r.users.Wait()
	w.keepTails()
	if cfg.MetricsURL != "" {
		res.Loop = loopAfter(before, cfg.MetricsURL)
	}
	r.fill(res)
	if err := r.log.close(); err != nil {
		return res, fmt.Errorf("users: request log: %w", err)
	}
	return res, nil
}

// loopAfter is the loop's figures from before to a scrape now.
func loopAfter(before *snapshot, metricsURL string) *LoopFigures {
	after, err := scrape(context.Background(), metricsURL)
	if err != nil {
		return &LoopFigures{Error: err.Error()}
	}
	return loopBetween(before, after)
}

// arrive brings the users in on the schedule, open loop: it never waits
// for a user, only for the next one's due time. It closes done when the
// schedule is over or the run ends.
func (r *usersRun) arrive(done chan<- struct{}) {
	defer close(done)
	for i := range r.cfg.Arrival.Users() {
		due := r.start.Add(r.cfg.Arrival.Due(i))
		if !sleepUntil(r.ctx, due) {
			return
		}
		r.launch(i, due)
	}
}

// sleepUntil waits until t; false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t); d > 0 {
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// launch starts user i, due at due, on a goroutine of its own.
func (r *usersRun) launch(i int, due time.Time) {
	u := &User{ID: i, Rand: rand.New(rand.NewPCG(r.cfg.Seed, uint64(i))), run: r, due: due}
	u.Jar, _ = cookiejar.New(nil)
	if n := len(r.cfg.BindAddrs); n > 0 {
		u.bind = &net.TCPAddr{IP: r.cfg.BindAddrs[i%n].AsSlice()}
	}
	r.arrived.Add(1)
	r.active.Add(1)
	r.users.Add(1)
	go func() {
		defer r.users.Done()
		defer r.active.Add(-1)
		defer u.releaseBody()
		if err := r.cfg.Scenario(r.ctx, u); err != nil && r.ctx.Err() == nil {
			r.failed.Add(1)
			r.noteErr("scenario", err)
		}
	}()
}

// allDone is closed once the arrivals are over and every user has
// returned: nothing more can happen.
func (r *usersRun) allDone(arrivals <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() { <-arrivals; r.users.Wait(); close(done) }()
	return done
}

// watch cuts the run into windows until its end: the schedule and Hold
// over (never with Hold 0), every user returned, a StopWhen rule broken,
// or ctx done.
func (r *usersRun) watch(ctx context.Context, res *UsersResult, w *windower, allDone <-chan struct{}) {
	tick := time.NewTicker(r.cfg.Window)
	defer tick.Stop()
	var end <-chan time.Time
	if r.cfg.Hold > 0 {
		t := time.NewTimer(time.Until(r.start.Add(r.cfg.Arrival.Over + r.cfg.Hold)))
		defer t.Stop()
		end = t.C
	}
	var rule stopRule
	for {
		select {
		case <-tick.C:
			res.Windows = append(res.Windows, w.close(ctx))
			if rule.stops(r.cfg, res) {
				return
			}
		case <-end:
			return
		case <-allDone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// stopRule applies UsersConfig.StopWhen window by window: the run stops
// after StopAfter windows in a row failed one of its thresholds, past
// the first MinWindows.
type stopRule struct {
	failing int    // windows failing in a row
	first   string // what the first of them broke
}

// stops checks res's last window and reports whether the run stops
// there; then it sets res.Broke and res.BrokeAt (the first failing
// window).
func (s *stopRule) stops(cfg UsersConfig, res *UsersResult) bool {
	if len(res.Windows) <= cfg.MinWindows {
		return false
	}
	switch broke := checkWindow(cfg.StopWhen, &res.Windows[len(res.Windows)-1]); {
	case broke == "":
		s.failing, s.first = 0, ""
	case s.failing == 0:
		s.failing, s.first = 1, broke
	default:
		s.failing++
	}
	if s.failing < max(cfg.StopAfter, 1) {
		return false
	}
	res.Broke, res.BrokeAt = s.first, len(res.Windows)-s.failing
	return true
}

func (r *usersRun) resolve(path string) string {
	ref, err := url.Parse(path)
	if err != nil {
		return path
	}
	return r.base.ResolveReference(ref).String()
}

// step returns the figures of the step named name, made on first use.
func (r *usersRun) step(name string) *stepStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.steps[name]
	if !ok {
		st = newStepStats(name, r.cfg.Timeline)
		r.steps[name] = st
	}
	return st
}

// noteErr keeps the first error of each step.
func (r *usersRun) noteErr(step string, err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if _, ok := r.firstErr[step]; !ok {
		r.firstErr[step] = err.Error()
	}
}
