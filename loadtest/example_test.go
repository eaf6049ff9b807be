package loadtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

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
