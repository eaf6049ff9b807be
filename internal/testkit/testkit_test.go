package testkit_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuantile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	assert.Equal(t, time.Duration(6), testkit.Quantile(ds, 0.5))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 0.99))
	assert.Equal(t, time.Duration(10), testkit.Quantile(ds, 1))
	assert.Equal(t, time.Duration(1), testkit.Quantile(ds, 0))
}

func TestABField(t *testing.T) {
	report := "Server Software:        gameserver\nComplete requests:      5000\nFailed requests:        0\n"
	assert.Equal(t, "5000", testkit.ABField(report, "Complete requests"))
	assert.Equal(t, "gameserver", testkit.ABField(report, "Server Software"))
	assert.Equal(t, "", testkit.ABField(report, "Non-2xx responses"))
}

func TestParseAB(t *testing.T) {
	report := "Document Length:        2159 bytes\nComplete requests:      2000\nFailed requests:        0\n" +
		"Total transferred:      4604000 bytes\nHTML transferred:       4318000 bytes\nRequests per second:    8412.57 [#/sec] (mean)\n"
	assert.Equal(t, testkit.ABFigures{Complete: 2000, DocLength: 2159, HTML: 4318000, Total: 4604000, RPS: 8412.57},
		testkit.ParseAB(t, report))
}

func TestLogBuffer(t *testing.T) {
	// Ensure writes from several goroutines while the test reads lose
	// nothing (and, under -race, race with nothing).
	var log testkit.LogBuffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&log, "%d\n", i)
				_ = log.String()
			}
		})
	}
	wg.Wait()
	assert.Len(t, strings.Fields(log.String()), 400)
}

func TestParseMetrics(t *testing.T) {
	families := testkit.ParseMetrics(t, strings.NewReader("# TYPE x_total counter\nx_total 3\n"))
	require.Contains(t, families, "x_total")
	assert.Equal(t, 3.0, families["x_total"].Metric[0].GetCounter().GetValue())
}

func TestEventStream(t *testing.T) {
	// Ensure messages are read as the WHATWG parser reads them: data
	// lines joined, comments and id-only messages reported when asked,
	// and the end of the stream seen.
	url := testkit.MustServe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: hello\nid: 1\ndata: hi\n\n: beat\n\nid: 2\n\ndata: a\ndata:b\n\n")
	}))
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	s := testkit.OpenEvents(t, nil, req, testkit.EventsOptions{Comments: true, IDs: true})
	assert.Equal(t, []testkit.Event{{Event: "hello", ID: "1", Data: "hi"}, {Event: ":"}, {Event: "id", ID: "2"}}, s.Until(t, "id"))
	assert.Equal(t, testkit.Event{Data: "a\nb"}, s.Wait(t, time.Minute, func(ev testkit.Event) bool { return ev.Data != "" }))
	assert.ErrorIs(t, s.End(t, time.Minute), io.EOF)
}

func TestParseEvents(t *testing.T) {
	// Ensure a stream's text is read as WHATWG's algorithm reads it: an
	// empty data field counts (data "\n" is two of them), a message
	// without data is not dispatched, any line end ends a line, comments
	// and retry are skipped.
	got := testkit.ParseEvents("data:\ndata:\n\nevent: x\nid: 3\n\n: c\r\nid: 4\rretry: 5\r\ndata: a\r\ndata:b\n\ndata: no end")
	assert.Equal(t, []testkit.Event{{Data: "\n"}, {ID: "4", Data: "a\nb"}}, got)
}

func TestAttempts(t *testing.T) {
	// Ensure Attempts stops at the first attempt whose assertions hold,
	// ends an attempt at its first require, and fails the test when none
	// holds, with the last attempt's failures.
	runs := 0
	testkit.Attempts(t, 3, func(t testkit.T) {
		runs++
		require.Equal(t, 2, runs)
	})
	assert.Equal(t, 2, runs)

	var rec recordingTB
	runs = 0
	testkit.Attempts(&rec, 3, func(t testkit.T) {
		runs++
		assert.Equal(t, 0, runs, "run %d", runs)
	})
	assert.Equal(t, 3, runs)
	assert.True(t, rec.failed)
	require.Len(t, rec.logs, 3)
	assert.Contains(t, rec.logs[0], "attempt 1 of 3 failed")
	assert.Contains(t, rec.logs[2], "all 3 attempts failed")
	assert.Contains(t, rec.logs[2], "run 3")
	assert.NotContains(t, rec.logs[2], "run 2")
}

// recordingTB is a testing.TB that records what a helper reports to it.
type recordingTB struct {
	testing.TB
	failed bool
	logs   []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}

func TestWatchStalls(t *testing.T) {
	// Ensure a stall of the watcher's goroutine is seen: GOMAXPROCS 1 and
	// a goroutine that keeps the only P busy for 50 ms.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := testkit.WatchStalls()
	time.Sleep(5 * time.Millisecond) // the watcher is sleeping
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	assert.GreaterOrEqual(t, stop(), 5*time.Millisecond)
}
