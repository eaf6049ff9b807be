package loadtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

// MustServeWaitMetrics serves a loop that attributes its requests' waits:
// between the first scrape and any later one, route "GET /{$}" gets 200
// attributed requests (197 waited up to 1 ms behind other work, 3 up to
// 25 ms; every one up to 0.1 ms for a CPU; handlers up to 0.1 ms), route
// "GET /game" none, and the loop's thread ran 0.9 s and waited 0.1 s for
// a CPU.
func MustServeWaitMetrics(tb testing.TB) string {
	var scrapes atomic.Int64
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		n, cpu, cpuWait := int64(0), 5.0, 1.0
		hol := [4]int64{} // cumulative: le 0.0001, 0.001, 0.025, +Inf
		if scrapes.Add(1) > 1 {
			n, cpu, cpuWait, hol = 200, 5.9, 1.1, [4]int64{0, 197, 200, 200}
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE gameserver_loop_cpu_seconds_total counter\ngameserver_loop_cpu_seconds_total %g\n", cpu)
		fmt.Fprintf(w, "# TYPE gameserver_loop_cpu_wait_seconds_total counter\ngameserver_loop_cpu_wait_seconds_total %g\n", cpuWait)
		hist := func(name string, route string, c [4]int64, sum float64) {
			fmt.Fprintf(w, "# TYPE %s histogram\n", name)
			for i, le := range []string{"0.0001", "0.001", "0.025", "+Inf"} {
				fmt.Fprintf(w, "%s_bucket{route=%q,le=%q} %d\n", name, route, le, c[i])
			}
			fmt.Fprintf(w, "%s_sum{route=%q} %g\n%s_count{route=%q} %d\n", name, route, sum, name, route, c[3])
		}
		all := [4]int64{n, n, n, n}
		hist("gameserver_request_head_of_line_seconds", "GET /{$}", hol, float64(n)*0.0005)
		fmt.Fprintf(w, "gameserver_request_head_of_line_seconds_bucket{route=\"GET /game\",le=\"+Inf\"} 7\n"+
			"gameserver_request_head_of_line_seconds_sum{route=\"GET /game\"} 0.01\ngameserver_request_head_of_line_seconds_count{route=\"GET /game\"} 7\n")
		hist("gameserver_request_cpu_wait_seconds", "GET /{$}", all, float64(n)*0.00005)
		hist("gameserver_request_handler_seconds", "GET /{$}", all, float64(n)*0.00005)
	})
}

func TestLoopWait(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	metrics := MustServeWaitMetrics(t) + "/metrics"
	// Ensure a run reads the loop's attribution of its requests' waits:
	// per route, the increase over the run, and the loop's wait for a CPU.
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 3, MetricsURL: metrics})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	w := res.Loop.Wait
	require.NotNil(t, w, "the server exports the wait families")
	assert.Equal(t, 900*time.Millisecond, w.LoopCPU)
	assert.Equal(t, 100*time.Millisecond, w.LoopCPUWait)
	share, ok := w.CPUWaitShareForTest()
	assert.True(t, ok)
	assert.InDelta(t, 0.1, share, 1e-9)
	require.Len(t, w.Routes, 1, "a route with no attributed request during the run (GET /game) is left out: %+v", w.Routes)
	r := w.Routes[0]
	assert.Equal(t, "GET /{$}", r.Route)
	assert.EqualValues(t, 200, r.Requests)
	assert.Equal(t, 500*time.Microsecond, r.HeadOfLine.Mean)
	assert.Greater(t, r.HeadOfLine.P99, time.Millisecond, "3 of 200 waited past 1 ms: the p99 is in the 25 ms bucket")
	assert.LessOrEqual(t, r.HeadOfLine.P99, 25*time.Millisecond)
	assert.LessOrEqual(t, r.HeadOfLine.P50, time.Millisecond)
	assert.Equal(t, 25*time.Millisecond, r.HeadOfLine.Max, "the highest bucket that grew")
	assert.Equal(t, 100*time.Microsecond, r.CPUWait.Max)

	// Ensure the JSON carries it under loop.loop_wait, valid against the
	// schema, and that a server without the families has none.
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, loadtest.Print(res, loadtest.PrintOptions{Stdout: &stdout, Stderr: &stderr, JSON: true,
		Settings: loadtest.Settings{URLs: []string{url}, Concurrency: 1, Timeout: 30}}), stderr.String())
	var doc any
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc))
	c := jsonschema.NewCompiler()
	schema, err := c.Compile("schema.json")
	require.NoError(t, err)
	require.NoError(t, schema.Validate(doc))
	assert.Contains(t, stdout.String(), `"loop_wait": {`)
	assert.Contains(t, stdout.String(), `"route": "GET /{$}"`)
	assert.Contains(t, stdout.String(), `"cpu_wait_share": 0.1`)

	res, err = loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 3, MetricsURL: MustServeLoopMetrics(t) + "/metrics"})
	require.NoError(t, err)
	assert.Nil(t, res.Loop.Wait, "no wait families: unknown, not zero")
}
