package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	StopWhen   []StepThreshold
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
	// BindAddrs, when set, are the local addresses users connect from:
	// user i's stream and the connections its requests dial from
	// BindAddrs[i % len] (127.0.0.2, 127.0.0.3, ... on loopback), for a
	// server that limits what one client address may hold (a request may
	// still reuse an idle connection another user dialed).
	BindAddrs []netip.Addr
}

// User is one virtual user: its session (cookie jar), its seeded Rand, and
// the steps it takes. Its methods are for its scenario's goroutine only.
type User struct {
	ID   int        // arrival order, from 0
	Rand *rand.Rand // seeded by UsersConfig.Seed and ID
	Jar  http.CookieJar

	run  *usersRun
	due  time.Time    // when the next step is due: arrival, or the last step's end plus think time
	buf  []byte       // the last response's body
	bind *net.TCPAddr // the local address it connects from, nil: any
}

// bindKey carries a user's local address to the pool's dialer.
type bindKey struct{}

// dial connects from the local address ctx carries (bindKey), if any.
func (r *usersRun) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d := r.dialer
	if a, ok := ctx.Value(bindKey{}).(*net.TCPAddr); ok && a != nil {
		d.LocalAddr = a
	}
	return d.DialContext(ctx, network, address)
}

// Response is a step's response after redirects: valid until the user's
// next request (Body is reused).
type Response struct {
	Status int
	Header http.Header
	URL    *url.URL // of the last request, after redirects
	Body   []byte
	Start  time.Time // when the step began: a write's time for User.Cause
}

// ErrStatus is a step's error for a response that is not 2xx or 3xx.
type ErrStatus struct {
	Step   string
	Status int
}

func (e *ErrStatus) Error() string { return fmt.Sprintf("%s: status %d", e.Step, e.Status) }

// Get requests path (resolved against UsersConfig.URL) as step, following
// redirects, and reads the whole body. A status of 400 or more is an
// error (*ErrStatus) counted against the step, as are network errors.
func (u *User) Get(ctx context.Context, step, path string) (*Response, error) {
	return u.do(ctx, step, http.MethodGet, path, nil)
}

// PostForm posts form to path as application/x-www-form-urlencoded, as
// Get does otherwise (a 303 after it is followed with a GET).
func (u *User) PostForm(ctx context.Context, step, path string, form url.Values) (*Response, error) {
	return u.do(ctx, step, http.MethodPost, path, form)
}

func (u *User) do(ctx context.Context, step, method, path string, form url.Values) (*Response, error) {
	r := u.run
	st := r.step(step)
	start := u.begin(st)
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	var sent time.Time
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
		if sent.IsZero() {
			sent = time.Now()
		}
	}}
	ctx = httptrace.WithClientTrace(ctx, trace)
	if u.bind != nil {
		ctx = context.WithValue(ctx, bindKey{}, u.bind)
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, r.resolve(path), body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	client := http.Client{Transport: r.transport, Jar: u.Jar}
	resp, err := client.Do(req)
	var res *Response
	if err == nil {
		u.buf, err = readAllInto(u.buf[:0], resp.Body)
		resp.Body.Close()
		res = &Response{Status: resp.StatusCode, Header: resp.Header, URL: resp.Request.URL, Body: u.buf, Start: start}
		if err == nil && resp.StatusCode >= 400 {
			err = &ErrStatus{Step: step, Status: resp.StatusCode}
		}
	}
	done := time.Now()
	if sent.IsZero() {
		sent = start
	}
	u.end(st, start, sent, done, err)
	if err != nil && r.ctx.Err() == nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%s: no response in %v: %w", step, r.cfg.Timeout, err)
		}
		r.noteErr(step, err)
	}
	return res, err
}

// readAllInto appends r's bytes to b.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// begin starts a step: it is due at u.due (its lateness, the load
// generator's own delay, is recorded apart) and starts now.
func (u *User) begin(st *stepStats) time.Time {
	now := time.Now()
	st.late(now.Sub(u.due))
	return now
}

// end records a step that began at start, got its connection at sent and
// ended at done, and makes the user's next step due at done.
func (u *User) end(st *stepStats, start, sent, done time.Time, err error) {
	failed := err != nil && u.run.ctx.Err() == nil // a step cut by the run's end is not the server's error
	if err == nil || failed {
		st.record(done.Sub(start), done.Sub(sent), failed, done)
	}
	u.due = done
}

// Think sleeps an exponentially distributed time of the given mean, drawn
// from u.Rand (so a seed repeats it), and makes the next step due after
// it. It returns ctx's error if ctx ends first.
func (u *User) Think(ctx context.Context, mean time.Duration) error {
	return u.Sleep(ctx, u.ThinkTime(mean))
}

// ThinkTime draws a think time from u.Rand: exponentially distributed
// with the given mean, as Locust's and k6's random waits; Think sleeps it.
func (u *User) ThinkTime(mean time.Duration) time.Duration {
	return time.Duration(u.Rand.ExpFloat64() * float64(mean))
}

// Sleep sleeps d after the user's last step (or arrival) ended, and makes
// the next step due then.
func (u *User) Sleep(ctx context.Context, d time.Duration) error {
	u.due = u.due.Add(d)
	t := time.NewTimer(time.Until(u.due))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cause notes that a write the user made at `at` (Response.Start) causes
// events that StreamOptions.Key names key, on any user's stream: each
// such event that arrives after at, within UsersConfig.Timeout, counts its
// delivery time (arrival less at) in UsersResult.Delivery. A later Cause
// of the same key replaces it.
//
// The Cause may come after some of its events have arrived (a write's
// events can reach other streams before its response reaches the
// writer): an event whose key has no Cause yet is kept for
// UsersConfig.Timeout and counted when the Cause comes, if it arrived
// after at.
func (u *User) Cause(key string, at time.Time) {
	for _, arrived := range u.run.causes.put(key, at) {
		u.run.delivery.record(arrived.Sub(at), arrived.Sub(at), false, arrived)
	}
}

// Error counts err against step without a latency (something that is no
// request failed: a stream the server cut, say); it is in Errors, not in
// Count.
func (u *User) Error(step string, err error) {
	r := u.run
	if r.ctx.Err() != nil {
		return
	}
	r.step(step).fail()
	r.noteErr(step, err)
}

// usersRun is one RunUsers.
type usersRun struct {
	cfg       UsersConfig
	ctx       context.Context
	base      *url.URL
	transport *http.Transport
	dialer    net.Dialer
	start     time.Time

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
		st = newStepStats(name, r.start)
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

// RunUsers runs cfg.Scenario for each user of cfg.Arrival, each arriving
// on schedule on a goroutine of its own, until the schedule and Hold are
// over (or a StopWhen threshold fails, or ctx ends), and returns the
// figures. The error is for a configuration that cannot run; what the
// users met is in the result.
func RunUsers(ctx context.Context, cfg UsersConfig) (*UsersResult, error) {
	if err := cfg.Arrival.check(); err != nil {
		return nil, err
	}
	if cfg.Scenario == nil {
		return nil, errors.New("users: no scenario")
	}
	base, err := url.Parse(cfg.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("users: the URL must be http://host[:port] or https://..., got %q", cfg.URL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Second
	}
	if cfg.MaxIdle <= 0 {
		cfg.MaxIdle = 1024
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &usersRun{cfg: cfg, ctx: runCtx, base: base, steps: map[string]*stepStats{}, firstErr: map[string]string{},
		causes: newCauseMap(cfg.Timeout)}
	r.transport = &http.Transport{Proxy: nil, DialContext: r.dial, MaxIdleConns: cfg.MaxIdle,
		MaxIdleConnsPerHost: cfg.MaxIdle, MaxConnsPerHost: cfg.Connections, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ForceAttemptHTTP2: false}
	defer r.transport.CloseIdleConnections()
	var before *snapshot
	if cfg.MetricsURL != "" {
		before, err = scrape(ctx, cfg.MetricsURL)
		if err != nil {
			return nil, fmt.Errorf("users: metrics: %w", err)
		}
	}
	r.start = time.Now()
	r.delivery = newStepStats(DeliveryStep, r.start)
	var users sync.WaitGroup
	arrivals := make(chan struct{})
	go func() { // the arrivals: open loop, never waiting for a user
		defer close(arrivals)
		n := cfg.Arrival.Users()
		for i := range n {
			due := r.start.Add(cfg.Arrival.Due(i))
			if d := time.Until(due); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-runCtx.Done():
					t.Stop()
					return
				}
			}
			if runCtx.Err() != nil {
				return
			}
			u := &User{ID: i, Rand: rand.New(rand.NewPCG(cfg.Seed, uint64(i))), run: r, due: due}
			u.Jar, _ = cookiejar.New(nil)
			if n := len(cfg.BindAddrs); n > 0 {
				u.bind = &net.TCPAddr{IP: cfg.BindAddrs[i%n].AsSlice()}
			}
			r.arrived.Add(1)
			r.active.Add(1)
			users.Add(1)
			go func() {
				defer users.Done()
				defer r.active.Add(-1)
				if err := cfg.Scenario(runCtx, u); err != nil && runCtx.Err() == nil {
					r.failed.Add(1)
					r.noteErr("scenario", err)
				}
			}()
		}
	}()
	allDone := make(chan struct{})
	go func() { <-arrivals; users.Wait(); close(allDone) }()
	end := r.start.Add(cfg.Arrival.Over + cfg.Hold)
	res := &UsersResult{Arrival: cfg.Arrival, Hold: cfg.Hold, Window: cfg.Window, StartedAt: r.start}
	w := newWindower(r, before)
	failing, firstBroke := 0, "" // windows failing in a row, the first one's threshold
	tick := time.NewTicker(cfg.Window)
	defer tick.Stop()
	endTimer := time.NewTimer(time.Until(end))
	defer endTimer.Stop()
	if cfg.Hold == 0 {
		endTimer.Stop()
	}
loop:
	for {
		select {
		case <-tick.C:
			win := w.close(ctx)
			res.Windows = append(res.Windows, win)
			if len(res.Windows) > cfg.MinWindows {
				broke := checkWindow(cfg.StopWhen, &win)
				switch {
				case broke == "":
					failing, firstBroke = 0, ""
				case failing == 0:
					failing, firstBroke = 1, broke
				default:
					failing++
				}
				if failing >= max(cfg.StopAfter, 1) {
					res.Broke = firstBroke
					res.BrokeAt = len(res.Windows) - failing
					break loop
				}
			}
		case <-endTimer.C:
			break loop
		case <-allDone: // every user has returned: nothing more can happen
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	res.TimeTaken = time.Since(r.start)
	cancel()
	<-arrivals // no user arrives after RunUsers returns
	users.Wait()
	if cfg.MetricsURL != "" {
		after, err := scrape(context.Background(), cfg.MetricsURL)
		if err != nil {
			res.Loop = &LoopFigures{Error: err.Error()}
		} else {
			res.Loop = loopBetween(before, after)
		}
	}
	r.fill(res)
	return res, nil
}

// FormValue is the value of the first form control named name in the
// body (an <input name="NAME" value="..."> in any attribute order, HTML
// entities decoded), "" when there is none. Pages are scanned, not
// parsed: attribute values must be double-quoted.
func (r *Response) FormValue(name string) string {
	b := r.Body
	needle := []byte(` name="` + name + `"`)
	for {
		i := bytes.Index(b, needle)
		if i < 0 {
			return ""
		}
		lt := bytes.LastIndexByte(b[:i], '<')
		gt := bytes.IndexByte(b[i:], '>')
		if lt < 0 || gt < 0 {
			return ""
		}
		if v, ok := attr(b[lt:i+gt], "value"); ok {
			return v
		}
		b = b[i+gt:]
	}
}

// Link is the first link (href) in the body that starts with prefix, its
// entities decoded (&amp;), "" when there is none.
func (r *Response) Link(prefix string) string {
	if l := r.Links(prefix, 1); len(l) > 0 {
		return l[0]
	}
	return ""
}

// Links are up to n links (href) in the body that start with prefix, in
// page order; n < 0: all.
func (r *Response) Links(prefix string, n int) []string {
	var out []string
	b := r.Body
	needle := []byte(` href="` + html.EscapeString(prefix))
	for n != 0 {
		i := bytes.Index(b, needle)
		if i < 0 {
			break
		}
		b = b[i+len(` href="`):]
		end := bytes.IndexByte(b, '"')
		if end < 0 {
			break
		}
		out = append(out, html.UnescapeString(string(b[:end])))
		b = b[end:]
		n--
	}
	return out
}

// attr is the double-quoted value of attribute name in tag.
func attr(tag []byte, name string) (string, bool) {
	i := bytes.Index(tag, []byte(" "+name+`="`))
	if i < 0 {
		return "", false
	}
	v := tag[i+len(name)+3:]
	end := bytes.IndexByte(v, '"')
	if end < 0 {
		return "", false
	}
	return html.UnescapeString(string(v[:end])), true
}
