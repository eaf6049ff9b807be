package loadtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// Measure a page with 100 requests, 4 at a time, over kept-alive
// connections, and print ab's report.
func ExampleRun() {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer s.Close()
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: s.URL, Requests: 100, Concurrency: 4, KeepAlive: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.CompleteRequests, res.FailedRequests, res.DocumentLength)
	// Output: 100 0 5
}

// Compare a static and a dynamic page at the same settings, with a
// published run of another server beside them.
func ExampleRunGap() {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page")
	}))
	defer s.Close()
	g, err := loadtest.RunGap(context.Background(), loadtest.Config{Requests: 50, Concurrency: 2}, s.URL+"/", s.URL+"/game")
	if err != nil {
		fmt.Println(err)
		return
	}
	g.Reference = &loadtest.Reference{Label: "the old server (ab -n 1000 -c 12)",
		Static:  loadtest.ReferenceFigures{RequestsPerSecond: 64.61, Mean: 184, P50: 197, P99: 245, Max: 330},
		Dynamic: loadtest.ReferenceFigures{RequestsPerSecond: 28.45, Mean: 420, P50: 427, P99: 468, Max: 499}}
	loadtest.Print(g, loadtest.PrintOptions{Brief: true})
}

// Print a run as the flags of a command ask: its JSON in the versioned
// envelope, a threshold checked (its table on stderr), the exit status
// the command would give.
func ExamplePrint() {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer s.Close()
	cfg := loadtest.Config{URL: s.URL, Requests: 100, Concurrency: 4, KeepAlive: true}
	res, err := loadtest.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := loadtest.ParseThreshold("errors==0")
	code := loadtest.Print(res, loadtest.PrintOptions{JSON: true, Stdout: io.Discard, Stderr: io.Discard,
		Thresholds: []loadtest.Threshold{t}, Settings: loadtest.SettingsOf(cfg, s.URL)})
	fmt.Println("exit status", code)
	// Output: exit status 0
}

// Run virtual users: ten arrive at once, each views a page, thinks and
// views another; thresholds per step are checked on the run.
func ExampleRunUsers() {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<a href="/next">next</a>`)
	}))
	defer s.Close()
	res, err := loadtest.RunUsers(context.Background(), loadtest.UsersConfig{URL: s.URL, Arrival: loadtest.Arrival{From: 10, To: 10},
		Scenario: func(ctx context.Context, u *loadtest.User) error {
			page, err := u.Get(ctx, "home", "/")
			if err != nil {
				return err
			}
			next := page.Link("/next") // read before thinking: the body's buffer goes back to the pool
			if err := u.Think(ctx, time.Millisecond); err != nil {
				return err
			}
			_, err = u.Get(ctx, "next", next)
			return err
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	t, _ := loadtest.ParseThreshold("next.errors==0")
	code := loadtest.Print(res, loadtest.PrintOptions{Quiet: true, Thresholds: []loadtest.Threshold{t}})
	fmt.Println(res.Users, res.Step("home").Count, res.Step("next").Count, "exit status", code)
	// Output: 10 10 10 exit status 0
}

// Parse thresholds as k6 writes them: on a run, or on one step.
func ExampleParseThreshold() {
	for _, s := range []string{"p99<20ms", "page.p99.9<=1.5s", "errors<1%"} {
		t, err := loadtest.ParseThreshold(s)
		fmt.Printf("%q %q %s %g %v %v\n", t.Step, t.Metric, t.Op, t.Value, t.Percent, err)
	}
	// Output:
	// "" "p99" < 20 false <nil>
	// "page" "p99.9" <= 1500 false <nil>
	// "" "errors" < 1 true <nil>
}

// Write a run's percentile distribution as HdrHistogram's .hgrm, the
// text its plotter and wrk2 read.
func ExamplePrint_hgrm() {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer s.Close()
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: s.URL, Requests: 50, KeepAlive: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "hgrm")
	defer os.RemoveAll(dir)
	loadtest.Print(res, loadtest.PrintOptions{Quiet: true, HGRM: filepath.Join(dir, "run.hgrm")})
	b, _ := os.ReadFile(filepath.Join(dir, "run.hgrm"))
	fmt.Println(strings.SplitN(string(b), "\n", 2)[0])
	// Output:  Value	Percentile	TotalCount	1/(1-Percentile)
}
