package loadtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

func mustStepThresholds(t *testing.T, exprs ...string) []loadtest.Threshold {
	t.Helper()
	var out []loadtest.Threshold
	for _, e := range exprs {
		th, err := loadtest.ParseThreshold(e)
		require.NoError(t, err, e)
		out = append(out, th)
	}
	return out
}

func TestUsersArriveOnScheduleWhileServerStalls(t *testing.T) {
	// Ensure users arrive on the open-loop schedule while the server
	// answers nothing, and that a step's latency counts the wait for a
	// connection held by the stalled request (corrected), while the
	// uncorrected figure, from the connection on, hides it.
	const stall = 600 * time.Millisecond
	var start atomic.Pointer[time.Time]
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if s := start.Load(); s != nil {
			time.Sleep(time.Until(s.Add(stall)))
		}
		io.WriteString(w, "ok")
	})
	var mu sync.Mutex
	arrived := map[int]time.Duration{}
	var runStart time.Time
	cfg := loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 20, Over: time.Second}, Connections: 1,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			mu.Lock()
			if u.ID == 0 {
				runStart = time.Now()
				start.Store(&runStart)
			}
			arrived[u.ID] = time.Since(runStart)
			mu.Unlock()
			_, err := u.Get(ctx, "page", "/")
			return err
		}}
	res, err := loadtest.RunUsers(t.Context(), cfg)
	require.NoError(t, err)
	require.Equal(t, 20, res.Users)
	for i := range 20 {
		due := cfg.Arrival.Due(i)
		assert.InDelta(t, due.Seconds(), arrived[i].Seconds(), 0.2, "user %d arrived at %v, due at %v", i, arrived[i], due)
	}
	page := res.Step("page")
	require.EqualValues(t, 20, page.Count)
	assert.Zero(t, page.Errors)
	assert.GreaterOrEqual(t, percentile(t, page.Percentiles, 90), 300*time.Millisecond,
		"users who arrived during the stall waited for it: %v", page.Percentiles)
	assert.Less(t, percentile(t, page.Uncorrected, 90), 200*time.Millisecond,
		"from the connection on, only the first request saw the stall: %v", page.Uncorrected)
	assert.GreaterOrEqual(t, page.Latency.Max, 450*time.Millisecond)
}

func TestUsersThinkTimesRepeat(t *testing.T) {
	// Ensure think times come from the seeded Rand: the same seed draws
	// the same times for the same user, another seed or user others, with
	// the mean asked for; and Think sleeps one.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {})
	draw := func(seed uint64) map[int][]time.Duration {
		var mu sync.Mutex
		got := map[int][]time.Duration{}
		_, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Seed: seed,
			Arrival: loadtest.Arrival{From: 3, To: 3},
			Scenario: func(ctx context.Context, u *loadtest.User) error {
				var ds []time.Duration
				for range 2000 {
					ds = append(ds, u.ThinkTime(20*time.Second))
				}
				t0 := time.Now()
				if err := u.Think(ctx, 5*time.Millisecond); err != nil {
					return err
				}
				assert.Less(t, time.Since(t0), 5*time.Second)
				mu.Lock()
				got[u.ID] = ds
				mu.Unlock()
				return nil
			}})
		require.NoError(t, err)
		return got
	}
	a, b, c := draw(7), draw(7), draw(8)
	require.Len(t, a, 3)
	assert.Equal(t, a, b, "the same seed repeats")
	assert.NotEqual(t, a[0], c[0], "another seed differs")
	assert.NotEqual(t, a[0], a[1], "users differ")
	var sum time.Duration
	for _, d := range a[0] {
		sum += d
	}
	assert.InDelta(t, 20, (sum / time.Duration(len(a[0]))).Seconds(), 2, "exponential with the mean asked for")
}

func TestUsersStepHistogramsAndThresholds(t *testing.T) {
	// Ensure each step has its own histogram and that thresholds apply
	// per step, on the run and, with StopWhen, on each window.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(40 * time.Millisecond)
		case "/missing":
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `<form><input type="hidden" name="token" value="abc"></form><a href="/slow?x=1">slow</a>`)
	})
	var tokens atomic.Int64
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 20, Over: 500 * time.Millisecond},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			r, err := u.Get(ctx, "fast", "/")
			if err != nil {
				return err
			}
			if r.FormValue("token") == "abc" {
				tokens.Add(1)
			}
			if _, err := u.Get(ctx, "slow", r.Link("/slow")); err != nil {
				return err
			}
			_, err = u.Get(ctx, "missing", "/missing")
			return err
		}})
	require.NoError(t, err)
	assert.EqualValues(t, 10, tokens.Load(), "the form field was read from each page")
	fast, slow, missing := res.Step("fast"), res.Step("slow"), res.Step("missing")
	assert.EqualValues(t, 10, fast.Count)
	assert.EqualValues(t, 10, slow.Count)
	assert.EqualValues(t, 10, missing.Errors, "a 404 is an error of its step")
	assert.Zero(t, fast.Errors)
	assert.GreaterOrEqual(t, slow.Latency.Min, 40*time.Millisecond)
	assert.Less(t, fast.Latency.Min, slow.Latency.Min)
	assert.EqualValues(t, 10, res.Failed, "each scenario returned the 404")
	assert.Contains(t, res.Errors["missing"], "status 404")

	checks := loadtest.Check(res, mustStepThresholds(t, "slow.p50>=40ms", "slow.p99<5ms", "missing.errors==0", "fast.errors==0"))
	require.Len(t, checks, 4)
	held := map[string]bool{}
	for _, c := range checks {
		held[c.Run+" "+c.Threshold.Expr] = c.OK
	}
	assert.Equal(t, map[string]bool{"slow slow.p50>=40ms": true, "slow slow.p99<5ms": false, "missing missing.errors==0": false,
		"fast fast.errors==0": true}, held)
	checks = loadtest.Check(res, mustStepThresholds(t, "errors==0"))
	assert.Len(t, checks, 3, "a threshold without a step applies to each")

	text := loadtest.Text(t, res)
	assert.Regexp(t, `(?m)^ +slow +10 +0 `, text)
	assert.Contains(t, text, "First error of missing: missing: status 404")

}

func TestUsersStopWhen(t *testing.T) {
	// Ensure StopWhen ends the run in the first windows the threshold
	// fails, two in a row with StopAfter 2, naming the first.
	url := MustServe(t, http.NotFound)
	t0 := time.Now()
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 10, Over: 20 * time.Second},
		Window: 200 * time.Millisecond, StopWhen: mustStepThresholds(t, "missing.errors==0"), StopAfter: 2,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			_, err := u.Get(ctx, "missing", "/missing")
			return err
		}})
	require.NoError(t, err)
	assert.Less(t, time.Since(t0), 10*time.Second)
	assert.Contains(t, res.Broke, "missing.errors==0")
	assert.GreaterOrEqual(t, res.BrokeAt, 0)
	assert.Len(t, res.Windows, res.BrokeAt+2, "two failing windows in a row, the first named")
}

func TestParseStepThreshold(t *testing.T) {
	for expr, want := range map[string][2]string{
		"hq.p99<50ms":       {"hq", "p99"},
		"delivery.p99.9<1s": {"delivery", "p99.9"},
		"p99.9<20ms":        {"", "p99.9"},
		"order.errors==0":   {"order", "errors"},
		"rate>=1":           {"", "rate"},
	} {
		th, err := loadtest.ParseThreshold(expr)
		require.NoError(t, err, expr)
		assert.Equal(t, want, [2]string{th.Step, th.Metric}, expr)
	}
	_, err := loadtest.ParseThreshold("hq.p42<1ms")
	assert.ErrorContains(t, err, "unknown metric")
}

func TestUsersStreamTimesEvent(t *testing.T) {
	// Ensure an event stream step opens, a Wait times the matching event,
	// and the delivery of an event from the write that caused it
	// (User.Cause) is counted at every stream: when the events come after
	// the Cause, and when they come before it (kept until it comes).
	t.Run("CauseFirst", func(t *testing.T) { testStreamTimesEvent(t, false) })
	t.Run("EventsFirst", func(t *testing.T) { testStreamTimesEvent(t, true) })
}

// streamDelay is how long after a write mustServeStreamWrite sends its
// event.
const streamDelay = 80 * time.Millisecond

// mustServeStreamWrite serves /events (a stream: hello, a comment, then
// what /write sends), /open (how many streams are open) and /write (a
// player event to every stream, streamDelay later).
func mustServeStreamWrite(t *testing.T) string {
	var mu sync.Mutex
	var streams []chan string
	return MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/events":
			ch := make(chan string, 4)
			mu.Lock()
			streams = append(streams, ch)
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "retry: 3000\nid: 1\nevent: hello\ndata: {}\n\n: a comment\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case msg := <-ch:
					io.WriteString(w, msg)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case "/open":
			mu.Lock()
			fmt.Fprint(w, len(streams))
			mu.Unlock()
		case "/write":
			go func() {
				time.Sleep(streamDelay)
				mu.Lock()
				defer mu.Unlock()
				for _, ch := range streams {
					ch <- "event: player\nid: 2\ndata: {\"id\":7,\ndata: \"x\":1}\n\n"
				}
			}()
		}
	})
}

func testStreamTimesEvent(t *testing.T, causeLate bool) {
	url := mustServeStreamWrite(t)
	var got atomic.Int64
	var r0start time.Time // user 0's write
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 3, To: 3},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			s, err := u.Stream(ctx, "events", "/events", loadtest.StreamOptions{Key: playerKey})
			if err != nil {
				return err
			}
			defer s.Close()
			changed := make(chan loadtest.Event, 1)
			go func() {
				ev, err := s.Wait(ctx, "changed", func(ev *loadtest.Event) bool { return ev.Name == "player" })
				if err == nil {
					changed <- ev
				}
				close(changed)
			}()
			if u.ID == 0 {
				if err := waitStreamsOpen(ctx, u, "3"); err != nil {
					return err
				}
				time.Sleep(50 * time.Millisecond) // the Waits are in place
				r, err := u.PostForm(ctx, "write", "/write", map[string][]string{"x": {"1"}})
				if err != nil {
					return err
				}
				r0start = r.Start
				if !causeLate {
					u.Cause("player 7", r.Start)
				}
			}
			ev, ok := <-changed
			if u.ID == 0 && causeLate {
				time.Sleep(100 * time.Millisecond) // the others' events are in too
				u.Cause("player 7", r0start)
			}
			if !ok {
				return fmt.Errorf("no player event")
			}
			if string(ev.Data) == "{\"id\":7,\n\"x\":1}" && ev.ID == "2" {
				got.Add(1)
			}
			return nil
		}})
	require.NoError(t, err)
	assertDelivered(t, res, got.Load())
}

// playerKey keys a player event as the write that caused it.
func playerKey(ev *loadtest.Event) []byte {
	if ev.Name == "player" {
		return []byte("player 7")
	}
	return nil
}

// waitStreamsOpen asks /open until n streams are open.
func waitStreamsOpen(ctx context.Context, u *loadtest.User, n string) error {
	for {
		r, err := u.Get(ctx, "open", "/open")
		if err != nil {
			return err
		}
		if string(r.Body) == n {
			return nil
		}
		if err := u.Sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// assertDelivered checks a run of three streams that each got the
// player event (got of them with the right data) and timed its delivery.
func assertDelivered(t *testing.T, res *loadtest.UsersResult, got int64) {
	t.Helper()
	assert.Empty(t, res.Errors)
	assert.EqualValues(t, 3, got, "every stream got the event, its data lines joined")
	assert.EqualValues(t, 3, res.Step("events").Count)
	changed := res.Step("changed")
	require.EqualValues(t, 3, changed.Count)
	assert.GreaterOrEqual(t, changed.Latency.Max, streamDelay, "the wait for the event includes the server's delay")
	d := res.Delivery
	require.EqualValues(t, 3, d.Count, "one delivery per stream")
	assert.GreaterOrEqual(t, d.Latency.Min, streamDelay)
	assert.Less(t, d.Latency.Max, 5*time.Second)
	assert.EqualValues(t, 6, res.Events, "hello and player on each stream; the comment is no event")
	assert.Contains(t, string(loadtest.HTML(t, res, loadtest.PrintOptions{Title: "users"})), "delivery")
}

func TestUsersBindAddrs(t *testing.T) {
	// Ensure user i's stream connects from BindAddrs[i % len], and its
	// requests from one of them.
	var mu sync.Mutex
	from := map[string]string{}
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.RemoteAddr, ":")
		mu.Lock()
		from[r.URL.Path+" "+r.URL.Query().Get("u")] = host
		mu.Unlock()
		if r.URL.Path == "/events" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	})
	addrs := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	_, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 2, To: 2}, BindAddrs: addrs,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			s, err := u.Stream(ctx, "events", fmt.Sprintf("/events?u=%d", u.ID), loadtest.StreamOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			_, err = u.Get(ctx, "page", fmt.Sprintf("/page?u=%d", u.ID))
			return err
		}})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.2", from["/events 0"])
	assert.Equal(t, "127.0.0.3", from["/events 1"])
	// A request may reuse an idle connection the other user dialed.
	assert.Contains(t, []string{"127.0.0.2", "127.0.0.3"}, from["/page 0"])
	assert.Contains(t, []string{"127.0.0.2", "127.0.0.3"}, from["/page 1"])
}
