package loadtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

// pageOnly is a scenario of one GET of "/" as step "page".
func pageOnly(ctx context.Context, u *loadtest.User) error {
	_, err := u.Get(ctx, "page", "/")
	return err
}

// okServer answers every request with a short page.
func okServer(t *testing.T) string {
	return MustServe(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
}

func TestArrival(t *testing.T) {
	// Ensure the schedule's arithmetic: a rate brings Rate*Over users,
	// user i due at i/Rate; a ramp brings From at once, then the rest
	// evenly up to To by the end of Over; At counts those brought by then.
	rate := loadtest.Arrival{Rate: 10, Over: 2 * time.Second}
	assert.Equal(t, 20, rate.Users())
	assert.Equal(t, time.Duration(0), rate.Due(0))
	assert.Equal(t, 500*time.Millisecond, rate.Due(5))
	assert.Equal(t, 1, rate.At(0))
	assert.Equal(t, 6, rate.At(550*time.Millisecond))
	assert.Equal(t, 20, rate.At(5*time.Second))

	ramp := loadtest.Arrival{From: 2, To: 6, Over: 4 * time.Second}
	assert.Equal(t, 6, ramp.Users())
	assert.Equal(t, time.Duration(0), ramp.Due(0))
	assert.Equal(t, time.Duration(0), ramp.Due(1), "From arrive at once")
	assert.Equal(t, time.Second, ramp.Due(2))
	assert.Equal(t, 4*time.Second, ramp.Due(5))
	assert.Equal(t, 2, ramp.At(0))
	assert.Equal(t, 4, ramp.At(2*time.Second))
	assert.Equal(t, 6, ramp.At(4*time.Second))

	flat := loadtest.Arrival{From: 3, To: 3}
	assert.Equal(t, 3, flat.Users())
	assert.Equal(t, time.Duration(0), flat.Due(2))
	assert.Equal(t, 3, flat.At(time.Hour))
}

func TestUsersBadConfig(t *testing.T) {
	// Ensure a configuration that cannot run is an error naming what is
	// wrong, before anything is sent.
	url := okServer(t)
	for _, tc := range []struct {
		cfg  loadtest.UsersConfig
		want string
	}{
		{loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 1}, Scenario: pageOnly}, "duration must be positive"},
		{loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: -1, Over: time.Second}, Scenario: pageOnly}, "rate must be a positive"},
		{loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 5, To: 2, Over: time.Second}, Scenario: pageOnly}, "a ramp goes from"},
		{loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 0.1, Over: time.Second}, Scenario: pageOnly}, "brings no user"},
		{loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1}}, "no scenario"},
		{loadtest.UsersConfig{URL: "ftp://x", Arrival: loadtest.Arrival{From: 1, To: 1}, Scenario: pageOnly}, "must be http"},
		{loadtest.UsersConfig{URL: "http://127.0.0.1:1", Arrival: loadtest.Arrival{From: 1, To: 1}, Scenario: pageOnly,
			MetricsURL: "http://127.0.0.1:1/metrics"}, "users: metrics:"},
	} {
		res, err := loadtest.RunUsers(t.Context(), tc.cfg)
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
		assert.Nil(t, res)
	}
}

func TestUsersWindowsAddUp(t *testing.T) {
	// Ensure the windows cut the run in order, each as long as asked,
	// their step counts and errors adding up to the steps' own (a Hold
	// makes the run end on a window's edge, give or take), users counted
	// as they arrive.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "ok")
	})
	const window = 200 * time.Millisecond
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 30, Over: time.Second},
		Hold: 500 * time.Millisecond, Window: window,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			for {
				if _, err := u.Get(ctx, "page", "/"); err != nil {
					return err
				}
				u.Get(ctx, "bad", "/bad")
				if err := u.Sleep(ctx, 50*time.Millisecond); err != nil {
					return nil
				}
			}
		}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Windows), 5)
	var pages, bad, badErrs int64
	for i, w := range res.Windows {
		if i > 0 {
			assert.Greater(t, w.At, res.Windows[i-1].At)
			assert.GreaterOrEqual(t, w.Users, res.Windows[i-1].Users)
		}
		assert.InDelta(t, window.Seconds(), w.Length.Seconds(), 0.4, "window %d", i)
		pages += w.Step("page").Count
		bad += w.Step("bad").Count
		badErrs += w.Step("bad").Errors
	}
	page, b := res.Step("page"), res.Step("bad")
	assert.LessOrEqual(t, pages, page.Count, "what ended after the last window is in the run's figures only")
	assert.Greater(t, pages, page.Count/2)
	assert.Equal(t, bad, badErrs, "every /bad is an error")
	assert.Equal(t, b.Count, b.Errors)
	assert.Equal(t, map[int]int64{500: b.Count}, b.StatusCodes)
	assert.Equal(t, map[int]int64{200: page.Count}, page.StatusCodes)
	assert.Equal(t, 30, res.Users)
	assert.Zero(t, res.Failed, "a 500 is the step's error, not the scenario's")
	assert.Equal(t, -1, res.BrokeAt)
	assert.Empty(t, res.Broke)
	assert.Less(t, res.TimeTaken, 10*time.Second, "arrivals and hold, then the end")
}

func TestUsersUserSecondsAndClientShare(t *testing.T) {
	// Ensure each window counts its user-seconds as the mean of the
	// users running at its two ends times its length, the run their sum,
	// and the load generator's CPU carries its share of the cores over
	// each window and over the run.
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{From: 2, To: 8, Over: 600 * time.Millisecond},
		Hold: 400 * time.Millisecond, Window: 100 * time.Millisecond,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			for u.Sleep(ctx, 20*time.Millisecond) == nil {
				u.Get(ctx, "page", "/")
			}
			return nil
		}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Windows), 5)
	prev, sum := 0, 0.0
	for i, w := range res.Windows {
		assert.InDelta(t, float64(prev+w.Active)/2*w.Length.Seconds(), w.UserSeconds, 1e-9, "window %d", i)
		prev, sum = w.Active, sum+w.UserSeconds
		if c := w.ClientCPU; c.Known {
			assert.InDelta(t, c.CPU.Seconds()/w.Length.Seconds()/float64(c.Cores), c.Share, 1e-9, "window %d", i)
		}
	}
	assert.Positive(t, res.UserSeconds, "users were running")
	assert.InDelta(t, sum, res.UserSeconds, 1e-9)
	if c := res.Client; c.Known {
		assert.Positive(t, c.Share)
		assert.InDelta(t, c.CPU.Seconds()/res.TimeTaken.Seconds()/float64(c.Cores), c.Share, 1e-9)
	}
}

func TestUsersStopAfterWindows(t *testing.T) {
	// Ensure StopWhen ends the run only after StopAfter failing windows
	// in a row, naming the first of them, and checks no window before
	// MinWindows: the server fails from 600 ms on.
	var once sync.Once
	var start time.Time
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { start = time.Now() }) // from the run's first request, however late it starts
		if time.Since(start) > 600*time.Millisecond {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	})
	stop := mustStepThresholds(t, "page.errors==0")
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 50, Over: 20 * time.Second},
		Window: 200 * time.Millisecond, StopWhen: stop, StopAfter: 3, MinWindows: 1, Scenario: pageOnly})
	require.NoError(t, err)
	require.NotEmpty(t, res.Broke, "the run stopped")
	assert.Contains(t, res.Broke, "page.errors==0 (page: ")
	require.GreaterOrEqual(t, res.BrokeAt, 1)
	assert.Len(t, res.Windows, res.BrokeAt+3, "three failing windows in a row, then the stop")
	assert.Zero(t, res.Windows[res.BrokeAt-1].Step("page").Errors, "the window before the first failing one held")
	assert.Positive(t, res.Windows[res.BrokeAt].Step("page").Errors)
	assert.Less(t, res.TimeTaken, 10*time.Second, "far before the schedule's end")
	text := loadtest.Text(t, res)
	assert.Contains(t, text, "Broke at ")
	assert.Contains(t, text, res.Broke)
}

func TestUsersMinWindows(t *testing.T) {
	// Ensure a window within MinWindows never stops the run, however bad.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{Rate: 20, Over: 20 * time.Second},
		Window: 100 * time.Millisecond, StopWhen: mustStepThresholds(t, "errors==0"), MinWindows: 4, Scenario: pageOnly})
	require.NoError(t, err)
	assert.Equal(t, 4, res.BrokeAt, "the first window checked")
	assert.Len(t, res.Windows, 5)
}

func TestUsersHoldZeroEndsWithUsers(t *testing.T) {
	// Ensure a run with no Hold ends once every user's scenario returned,
	// not at a window's edge.
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{From: 4, To: 4},
		Window: time.Hour, Scenario: pageOnly})
	require.NoError(t, err)
	assert.Less(t, res.TimeTaken, 10*time.Second)
	assert.Empty(t, res.Windows)
	assert.EqualValues(t, 4, res.Step("page").Count)
}

func TestUsersContextEnds(t *testing.T) {
	// Ensure ending RunUsers's context ends every user's and returns what
	// was measured, a user cut by the end counting no error.
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	var running atomic.Int64
	res, err := loadtest.RunUsers(ctx, loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{From: 3, To: 3},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			running.Add(1)
			defer running.Add(-1)
			for {
				if _, err := u.Get(ctx, "page", "/"); err != nil {
					return err
				}
				if err := u.Sleep(ctx, 20*time.Millisecond); err != nil {
					return err
				}
			}
		}})
	require.NoError(t, err)
	assert.Zero(t, running.Load(), "every user returned before RunUsers did")
	assert.Zero(t, res.Failed, "a scenario ended by the run's end did not fail")
	assert.Zero(t, res.Step("page").Errors)
	assert.Positive(t, res.Step("page").Count)
}

func TestUsersConnectionsCap(t *testing.T) {
	// Ensure Connections caps the connections the users share: ten users
	// at once make one connection, and wait for it.
	url, conns := MustServeCounting(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 10, To: 10}, Connections: 1,
		Scenario: pageOnly})
	require.NoError(t, err)
	assert.EqualValues(t, 1, conns.Load())
	page := res.Step("page")
	assert.EqualValues(t, 10, page.Count)
	assert.GreaterOrEqual(t, page.Latency.Max, 90*time.Millisecond, "the last waited for nine before it")
}

func TestUserErrors(t *testing.T) {
	// Ensure a step's error status is an *ErrStatus naming it, a
	// scenario's returned error counts the user as failed with its first
	// error kept, and User.Error counts an error without a latency.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusTeapot) })
	var statusErr atomic.Pointer[loadtest.ErrStatus]
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 2, To: 2},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			r, err := u.Get(ctx, "tea", "/")
			var es *loadtest.ErrStatus
			if errors.As(err, &es) {
				statusErr.Store(es)
			}
			if r == nil || r.Status != http.StatusTeapot {
				return fmt.Errorf("want the response beside the error, got %v", r)
			}
			u.Error("cut", errors.New("the stream was cut"))
			return errors.New("gave up")
		}})
	require.NoError(t, err)
	require.NotNil(t, statusErr.Load())
	assert.Equal(t, loadtest.ErrStatus{Step: "tea", Status: 418}, *statusErr.Load())
	assert.Equal(t, "tea: status 418", statusErr.Load().Error())
	assert.EqualValues(t, 2, res.Failed)
	assert.Equal(t, "gave up", res.Errors["scenario"])
	cut := res.Step("cut")
	assert.Zero(t, cut.Count, "no latency")
	assert.EqualValues(t, 2, cut.Errors)
	assert.Equal(t, "the stream was cut", res.Errors["cut"])
	text := loadtest.Text(t, res)
	assert.Contains(t, text, "First error of scenario: gave up")
	assert.Contains(t, text, "First error of tea: tea: status 418")
}

func TestUserTruncatedBody(t *testing.T) {
	// Ensure a body cut short of its Content-Length is the step's error,
	// not a success with what arrived, its status counted all the same.
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		if readRequest(r) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..")
		}
	})
	var got error
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			_, got = u.Get(ctx, "page", "/")
			return nil
		}})
	require.NoError(t, err)
	assert.ErrorIs(t, got, io.ErrUnexpectedEOF)
	page := res.Step("page")
	assert.EqualValues(t, 1, page.Count)
	assert.EqualValues(t, 1, page.Errors)
	assert.Equal(t, map[int]int64{200: 1}, page.StatusCodes)
	assert.Contains(t, res.Errors["page"], "unexpected EOF")
}

func TestUserUnbuildableRequest(t *testing.T) {
	// Ensure a step whose request cannot be made (a path that is no URL)
	// is counted as the step's error and noted, as a failed send is.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {})
	var got error
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			_, got = u.Get(ctx, "page", "/%zz")
			return nil
		}})
	require.NoError(t, err)
	require.Error(t, got)
	page := res.Step("page")
	assert.EqualValues(t, 1, page.Count)
	assert.EqualValues(t, 1, page.Errors)
	assert.Contains(t, res.Errors["page"], "%zz")
}

func TestUserTimeout(t *testing.T) {
	// Ensure a step that gets no response within Timeout is an error that
	// says so.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Timeout: 100 * time.Millisecond, Scenario: pageOnly})
	require.NoError(t, err)
	assert.EqualValues(t, 1, res.Step("page").Errors)
	assert.Contains(t, res.Errors["page"], "no response in 100ms")
}

func TestUserFollowsRedirectsWithCookies(t *testing.T) {
	// Ensure a form post followed by a 303 lands on the page it names,
	// with the cookie the post set, and the step's Response says where.
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			r.ParseForm()
			http.SetCookie(w, &http.Cookie{Name: "session", Value: r.PostForm.Get("name")})
			http.Redirect(w, r, "/hq", http.StatusSeeOther)
		case "/hq":
			c, err := r.Cookie("session")
			if err != nil {
				http.Error(w, "who?", http.StatusForbidden)
				return
			}
			fmt.Fprintf(w, `<p>HQ of %s</p><input type="hidden" value="tok&amp;en" name="csrf"><a href="/game?function=hq&amp;tid=1">hq</a>`, c.Value)
		}
	})
	var body, landed, csrf, link atomic.Value
	_, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			r, err := u.PostForm(ctx, "login", "/login", map[string][]string{"name": {"mulder"}})
			if err != nil {
				return err
			}
			body.Store(string(r.Body))
			landed.Store(r.URL.Path)
			csrf.Store(r.FormValue("csrf"))
			link.Store(r.Link("/game?"))
			return nil
		}})
	require.NoError(t, err)
	assert.Contains(t, body.Load(), "HQ of mulder")
	assert.Equal(t, "/hq", landed.Load())
	assert.Equal(t, "tok&en", csrf.Load())
	assert.Equal(t, "/game?function=hq&tid=1", link.Load())
}

func TestResponseScans(t *testing.T) {
	// Ensure a page's form values and links are found by scanning, in any
	// attribute order, entities decoded, and absent ones are "".
	r := &loadtest.Response{Body: []byte(`<form><input name="a" value="1"><input value="x &lt; y" type="text" name="b">` +
		`<input name="c"></form><a href="/p?x=1&amp;y=2">one</a> <a href="/p?x=2">two</a> <a href="/q">three</a>`)}
	for _, tc := range []struct{ name, want string }{{"a", "1"}, {"b", "x < y"}, {"c", ""}, {"missing", ""}} {
		assert.Equal(t, tc.want, r.FormValue(tc.name), tc.name)
	}
	assert.Equal(t, "/p?x=1&y=2", r.Link("/p?"))
	assert.Equal(t, []string{"/p?x=1&y=2", "/p?x=2"}, r.Links("/p?", -1))
	assert.Equal(t, []string{"/p?x=1&y=2"}, r.Links("/p?", 1))
	assert.Equal(t, []string{"/p?x=1&y=2", "/p?x=2", "/q"}, r.Links("/", -1))
	assert.Empty(t, r.Link("/none"))
	assert.Empty(t, (&loadtest.Response{Body: []byte(`<a href="/broken`)}).Links("/", -1))
}

// sseServer serves an event stream at /events that writes what the test
// sends on its channel, then ends it when the channel closes.
func sseServer(t *testing.T, events <-chan string, header *atomic.Value) string {
	return MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			io.WriteString(w, "not a stream")
			return
		}
		if header != nil {
			header.Store(r.Header.Get("Last-Event-ID"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				io.WriteString(w, e)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
}

func TestStreamEvents(t *testing.T) {
	// Ensure a stream parses the events a server writes (named or not,
	// data on several lines, comments skipped, a line longer than the
	// buffer), hands each to OnEvent, keeps the last id, counts them,
	// sends the header asked, hands a Wait the next match after its call,
	// and reports the server's end as ErrStreamClosed.
	events := make(chan string, 8)
	var lastID atomic.Value
	url := sseServer(t, events, &lastID)
	long := strings.Repeat("x", 5000)
	var mu sync.Mutex
	var got []loadtest.Event
	var waited loadtest.Event
	var ids []string
	var counted int64
	var streamErr, waitErr, afterErr error
	_, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1}, Timeout: 5 * time.Second,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			s, err := u.Stream(ctx, "open", "/events", loadtest.StreamOptions{Header: http.Header{"Last-Event-ID": {"41"}},
				OnEvent: collect(&mu, &got)})
			if err != nil {
				return err
			}
			events <- ": heartbeat\n\ndata: plain\n\n"
			events <- "event: tick\nid: 42\ndata: line one\ndata: line two\n\n"
			events <- "event: big\ndata: " + long + "\n\n"
			awaitEvents(s, 3)
			done := make(chan struct{})
			go func() {
				defer close(done)
				waited, waitErr = s.Wait(ctx, "late", func(ev *loadtest.Event) bool { return ev.Name == "late" })
			}()
			time.Sleep(300 * time.Millisecond) // the Wait is in place
			events <- "event: late\ndata: after the call\n\n"
			<-done
			ids = append(ids, s.LastID())
			counted = s.Events()
			close(events)
			<-s.Done()
			streamErr = s.Err()
			_, afterErr = s.Wait(ctx, "after", func(*loadtest.Event) bool { return true })
			return nil
		}})
	require.NoError(t, err)
	require.NoError(t, waitErr)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4)
	assert.Equal(t, "41", lastID.Load(), "the header asked was sent")
	assert.Equal(t, loadtest.Event{Name: "message", Data: []byte("plain")}, got[0], "the comment is no event")
	assert.Equal(t, loadtest.Event{Name: "tick", ID: "42", Data: []byte("line one\nline two")}, got[1])
	assert.Equal(t, long, string(got[2].Data))
	assert.Equal(t, "after the call", string(waited.Data))
	assert.Equal(t, []string{"42"}, ids)
	assert.EqualValues(t, 4, counted)
	assert.ErrorIs(t, streamErr, loadtest.ErrStreamClosed)
	assert.ErrorIs(t, afterErr, loadtest.ErrStreamClosed, "a Wait on an ended stream ends at once")
}

// collect is an OnEvent that keeps a copy of each event in *got.
func collect(mu *sync.Mutex, got *[]loadtest.Event) func(*loadtest.Event) {
	return func(ev *loadtest.Event) {
		mu.Lock()
		*got = append(*got, loadtest.Event{Name: ev.Name, ID: ev.ID, Data: append([]byte(nil), ev.Data...)})
		mu.Unlock()
	}
}

// awaitEvents waits, five seconds at most, for s to have received n
// events.
func awaitEvents(s *loadtest.Stream, n int64) {
	for deadline := time.Now().Add(5 * time.Second); s.Events() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStreamErrors(t *testing.T) {
	// Ensure a page that is no event stream is the step's error, and a
	// Wait that sees no match within Timeout is an error that says so.
	events := make(chan string)
	url := sseServer(t, events, nil)
	var openErr, waitErr error
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Timeout: 200 * time.Millisecond,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			_, openErr = u.Stream(ctx, "open page", "/page", loadtest.StreamOptions{})
			s, err := u.Stream(ctx, "open", "/events", loadtest.StreamOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			_, waitErr = s.Wait(ctx, "never", func(*loadtest.Event) bool { return false })
			return nil
		}})
	require.NoError(t, err)
	require.Error(t, openErr)
	assert.Contains(t, openErr.Error(), "not an event stream")
	require.Error(t, waitErr)
	assert.Contains(t, waitErr.Error(), "never: no matching event in 200ms")
	assert.EqualValues(t, 1, res.Step("open page").Errors)
	assert.EqualValues(t, 1, res.Step("never").Errors)
	assert.EqualValues(t, 1, res.Step("open").Count)
	assert.Zero(t, res.Step("open").Errors)
}

func TestStreamOpenFailures(t *testing.T) {
	// Ensure a stream that cannot be opened is its step's error, named
	// after the step, whatever failed: the connection refused, an answer
	// that is no HTTP, or none before the server hung up.
	garbage := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		if readRequest(r) {
			io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n")
		}
	})
	hangUp := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) { readRequest(r) })
	targets := map[string]string{"refused": "http://127.0.0.1:1/events", "garbage": garbage + "events", "hang-up": hangUp + "events"}
	errs := map[string]error{}
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: garbage, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			for step, url := range targets {
				_, errs[step] = u.Stream(ctx, step, url, loadtest.StreamOptions{})
			}
			return nil
		}})
	require.NoError(t, err)
	for step, want := range map[string]string{"refused": "connection refused", "garbage": "malformed HTTP", "hang-up": "EOF"} {
		require.Error(t, errs[step], step)
		assert.ErrorContains(t, errs[step], want, step)
		assert.True(t, strings.HasPrefix(errs[step].Error(), step+": "), "the error names its step: %v", errs[step])
		assert.EqualValues(t, 1, res.Step(step).Errors, step)
		assert.Contains(t, res.Errors[step], want, step)
	}
	assert.Zero(t, res.Failed, "the scenario went on")
}

func TestStreamsCloseWithTheRun(t *testing.T) {
	// Ensure streams still open when the run ends are closed, and a Wait
	// cut by the run's end counts no error.
	events := make(chan string)
	url := sseServer(t, events, nil)
	var mu sync.Mutex
	var streams []*loadtest.Stream
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 3, To: 3},
		Hold: 300 * time.Millisecond,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			s, err := u.Stream(ctx, "open", "/events", loadtest.StreamOptions{})
			if err != nil {
				return err
			}
			mu.Lock()
			streams = append(streams, s)
			mu.Unlock()
			s.Wait(ctx, "wait", func(*loadtest.Event) bool { return false })
			return nil
		}})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, streams, 3)
	for _, s := range streams {
		select {
		case <-s.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a stream outlived its run")
		}
	}
	assert.Zero(t, res.Step("wait").Errors)
	assert.Zero(t, res.Failed)
}

func TestUsersRampArrive(t *testing.T) {
	// Ensure a ramp brings From users at once, then the rest evenly over
	// Over, each on time.
	var mu sync.Mutex
	var start time.Time
	arrived := map[int]time.Duration{}
	cfg := loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{From: 2, To: 6, Over: 800 * time.Millisecond},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			mu.Lock()
			if start.IsZero() {
				start = time.Now()
			}
			arrived[u.ID] = time.Since(start)
			mu.Unlock()
			return nil
		}}
	res, err := loadtest.RunUsers(t.Context(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 6, res.Users)
	mu.Lock()
	defer mu.Unlock()
	for i := range 6 {
		assert.InDelta(t, cfg.Arrival.Due(i).Seconds(), arrived[i].Seconds(), 0.3, "user %d", i)
	}
}

func TestStreamClosedByUser(t *testing.T) {
	// Ensure a user closing its stream ends it with ErrStreamClosed, a
	// Wait on it then ending at once, and the stream's open is logged.
	events := make(chan string)
	url := sseServer(t, events, nil)
	var closedErr, waitErr error
	var log strings.Builder
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1}, RequestLog: &log,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			s, err := u.Stream(ctx, "open", "/events", loadtest.StreamOptions{})
			if err != nil {
				return err
			}
			s.Close()
			<-s.Done()
			closedErr = s.Err()
			_, waitErr = s.Wait(ctx, "wait", func(*loadtest.Event) bool { return true })
			return nil
		}})
	require.NoError(t, err)
	assert.ErrorIs(t, closedErr, loadtest.ErrStreamClosed)
	assert.ErrorIs(t, waitErr, loadtest.ErrStreamClosed)
	assert.EqualValues(t, 1, res.Step("wait").Errors)
	assert.Contains(t, log.String(), `"status":200,"bytes":0,"step":"open"}`)
}

func TestResponseScansLimits(t *testing.T) {
	// Ensure what the scan does not read is said plainly: single-quoted
	// or unquoted values are not found, nor a control without its tag's
	// end.
	r := &loadtest.Response{Body: []byte(`<input name="a" value='1'><input name="b" value=2><input name="c" value="3"`)}
	assert.Empty(t, r.FormValue("a"))
	assert.Empty(t, r.FormValue("b"))
	assert.Empty(t, r.FormValue("c"))
	r = &loadtest.Response{Body: []byte(`<input name="a"><input name="a" value="second">`)}
	assert.Equal(t, "second", r.FormValue("a"), "the first control of that name with a value")
}
