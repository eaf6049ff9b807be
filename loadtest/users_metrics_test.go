package loadtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

// MustServeWindowMetrics serves a server's metrics as a virtual-user run
// reads them each window: 100 more requests answered at each scrape, a
// recent longest turn of 7 ms, a loop busy a quarter of the time.
func MustServeWindowMetrics(tb testing.TB) string {
	start := time.Now()
	var scrapes atomic.Int64
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		n := scrapes.Add(1)
		fmt.Fprintf(w, "# TYPE gameserver_requests_total counter\ngameserver_requests_total %d\n", 100*n)
		fmt.Fprintf(w, "# TYPE gameserver_loop_longest_turn_recent_seconds gauge\ngameserver_loop_longest_turn_recent_seconds 0.007\n")
		fmt.Fprintf(w, "# TYPE gameserver_loop_busy_seconds_total counter\ngameserver_loop_busy_seconds_total %g\n", time.Since(start).Seconds()/4)
		fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", 0.01*float64(n))
	})
}

func TestUsersReadTheServersMetrics(t *testing.T) {
	// Ensure a virtual-user run with MetricsURL reads the server's figures
	// over the run and over each window: the loop's utilization, the
	// requests it answered per second, its recent longest turn.
	metrics := MustServeWindowMetrics(t) + "/metrics"
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{Rate: 20, Over: time.Second},
		Hold: 200 * time.Millisecond, Window: 300 * time.Millisecond, MetricsURL: metrics, Scenario: pageOnly})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Empty(t, res.Loop.Error)
	assert.InDelta(t, 0.25, res.Loop.Utilization, 0.15)
	assert.Positive(t, res.Loop.CPU)
	require.NotEmpty(t, res.Windows)
	for i, w := range res.Windows {
		require.NotNil(t, w.Loop, "window %d", i)
		assert.InDelta(t, 0.25, w.Loop.Utilization, 0.25, "window %d", i)
		assert.Equal(t, 7*time.Millisecond, w.LongestTurnRecent)
		assert.InDelta(t, 100/w.Length.Seconds(), w.ServerRequests, 100/w.Length.Seconds()*0.5, "window %d: 100 requests a scrape", i)
	}
	text := loadtest.Text(t, res)
	assert.Contains(t, text, "Server loop: utilization ")
}

func TestUsersMetricsGone(t *testing.T) {
	// Ensure a server whose metrics go away during the run gives each
	// window and the run the error, not a failed run.
	var up atomic.Bool
	up.Store(true)
	metrics := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "gameserver_requests_total 1\n")
	}) + "/metrics"
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: okServer(t), Arrival: loadtest.Arrival{From: 2, To: 2},
		Hold: 400 * time.Millisecond, Window: 100 * time.Millisecond, MetricsURL: metrics,
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			up.Store(false)
			<-ctx.Done()
			return nil
		}})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Contains(t, res.Loop.Error, "503")
	require.NotEmpty(t, res.Windows)
	assert.Contains(t, res.Windows[len(res.Windows)-1].Loop.Error, "503")
	assert.Contains(t, loadtest.Text(t, res), "Server loop: metrics unreadable: ")
}

func TestStreamSendsCookies(t *testing.T) {
	// Ensure a stream opens with the user's cookies, as a browser's
	// EventSource does, and with its Accept header.
	got := make(chan string, 1)
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "ss_session", Value: "abc"})
			http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark"})
			return
		}
		got <- r.Header.Get("Cookie") + " | " + r.Header.Get("Accept")
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	_, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: 1, To: 1},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			if _, err := u.Get(ctx, "login", "/login"); err != nil {
				return err
			}
			s, err := u.Stream(ctx, "events", "/events", loadtest.StreamOptions{})
			if err != nil {
				return err
			}
			s.Close()
			<-s.Done()
			return nil
		}})
	require.NoError(t, err)
	assert.Equal(t, "ss_session=abc; theme=dark | text/event-stream", <-got)
}
