package loadtest_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustServeSerial starts a server that runs one handler at a time, as a
// single-threaded server does: "/" answers at once, "/slow" holds the
// server for slow.
func MustServeSerial(tb testing.TB, slow time.Duration) string {
	var mu sync.Mutex
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/slow" {
			time.Sleep(slow)
		}
		io.WriteString(w, "ok")
	})
}

func TestHOL(t *testing.T) {
	url := MustServeSerial(t, 5*time.Millisecond)
	// Ensure the probe's latency rises while closed-loop clients load a
	// slow page on a server that runs one handler at a time, and the
	// load's own rate is measured.
	// A machine too busy to run the probe alone on time hides the effect
	// (a probe alone at 444 ms p50 beside three busy loops): it must show
	// in one of three runs.
	cfg := loadtest.Config{Concurrency: 4, KeepAlive: true, TimeLimit: 600 * time.Millisecond, Warmup: 100 * time.Millisecond}
	var h *loadtest.HOL
	testkit.Attempts(t, 3, func(t testkit.T) {
		var err error
		h, err = loadtest.RunHOL(context.Background(), cfg, 100, url+"/", url+"/slow")
		require.NoError(t, err)
		alone, loaded := loadtest.PercentileOf(h.Alone, 50), loadtest.PercentileOf(h.UnderLoad, 50)
		assert.Greater(t, loaded, 2*time.Millisecond, "p50 under load")
		assert.Greater(t, loaded, 2*alone, "p50 under load against alone")
		assert.Greater(t, loadtest.PercentileOf(h.UnderLoad, 99), loadtest.PercentileOf(h.Alone, 99))
		assert.InDelta(t, 100, h.Alone.RequestsPerSecond(), 15)
	})
	assert.Positive(t, h.Load.RequestsPerSecond())
	assert.Less(t, h.Load.RequestsPerSecond(), 210.0, "one 5 ms handler at a time")
	assert.Equal(t, 4, h.Load.ConcurrencyLevel)
	assert.Equal(t, "/slow", h.Load.DocumentPath)
	assert.Zero(t, h.Alone.FailedRequests+h.UnderLoad.FailedRequests+h.Load.FailedRequests)

	var b bytes.Buffer
	b.WriteString(loadtest.Text(t, h))
	assert.Regexp(t, `probe alone +\d+\.\d\d +[\d.]+ +[\d.]+`, b.String())
	assert.Regexp(t, `probe under load +\d+\.\d\d`, b.String())
	assert.Regexp(t, `load \(4 clients\) +\d+\.\d\d`, b.String())
	assert.Contains(t, b.String(), "Under load the probe's p50 is")
}

// MustServeQueue starts a server with one worker and a fixed service
// time: a request is delayed by delay (time that overlaps, as the network
// or a client's think time), then queues, first come first served, for
// service. Finish times are computed, not slept one after another, so
// timer overshoot does not add up.
func MustServeQueue(tb testing.TB, delay, service time.Duration) string {
	var mu sync.Mutex
	var free time.Time // when the worker is next free
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		ready := time.Now().Add(delay)
		mu.Lock()
		done := ready
		if free.After(done) {
			done = free
		}
		done = done.Add(service)
		free = done
		mu.Unlock()
		time.Sleep(time.Until(done))
		io.WriteString(w, "ok")
	})
}

func TestSweepKnee(t *testing.T) {
	url := MustServeQueue(t, 2*time.Millisecond, 10*time.Millisecond)
	// Ensure the knee of a server with a fixed 10 ms service time and one
	// worker, behind a 2 ms delay that overlaps, is at -c 4 of 1, 4, 32:
	// from one client (about 83 req/s) to four the worker becomes busy all
	// the time (100 req/s), and beyond that throughput stays while latency
	// grows with the queue (p99 about 40 ms at -c 4, 320 ms at -c 32).
	// (-c 2 would be the exact knee, but a busy machine's hiccups idle the
	// worker there.) Steps last a second so that a hiccup costs little; a
	// machine busy enough to starve the clients for the whole of a step
	// (68 req/s at -c 1 and at -c 4 beside three busy loops) hides the
	// knee: it must show in one of three sweeps.
	cfg := loadtest.Config{KeepAlive: true, TimeLimit: time.Second, Warmup: 100 * time.Millisecond}
	var s *loadtest.Sweep
	testkit.Attempts(t, 3, func(t testkit.T) {
		var err error
		s, err = loadtest.RunSweep(context.Background(), cfg, url, []int{1, 4, 32})
		require.NoError(t, err)
		require.Len(t, s.Steps, 3)
		steps := ""
		for _, st := range s.Steps {
			steps += fmt.Sprintf("\n-c %d: %.1f req/s, p99 %v", st.Concurrency, st.Result.RequestsPerSecond(), loadtest.PercentileOf(st.Result, 99))
		}
		require.GreaterOrEqual(t, s.Knee, 0, "a knee in%s", steps)
		assert.Equal(t, 4, s.Steps[s.Knee].Concurrency, "the knee in%s", steps)
		for _, st := range s.Steps {
			assert.InEpsilon(t, st.LittleExpected(), st.Little(), 0.2, "Little's law at -c %d", st.Concurrency)
		}
	})
	var b bytes.Buffer
	b.WriteString(loadtest.Text(t, loadtest.Sweeps{s}))
	assert.Regexp(t, `(?m)^ *4 .*<- knee`, b.String())
	assert.Contains(t, b.String(), "Knee at concurrency 4: going to 32")
}

func TestFindKnee(t *testing.T) {
	step := func(c int, rps float64, p99 time.Duration) loadtest.SweepStep {
		return loadtest.SweepStep{Concurrency: c, Result: &loadtest.Result{
			CompleteRequests: int64(rps), TimeTaken: time.Second,
			Percentiles: []loadtest.Percentile{{Percent: 99, Latency: p99}}}}
	}
	// Ensure the knee is the last step before throughput grows < 10% while
	// p99 grows > 50%, and that there is none when either does not happen.
	assert.Equal(t, 1, loadtest.FindKnee([]loadtest.SweepStep{
		step(1, 100, 10*time.Millisecond), step(2, 190, 11*time.Millisecond), step(4, 200, 20*time.Millisecond), step(8, 201, 40*time.Millisecond)}))
	assert.Equal(t, -1, loadtest.FindKnee([]loadtest.SweepStep{
		step(1, 100, 10*time.Millisecond), step(2, 200, 20*time.Millisecond), step(4, 300, 40*time.Millisecond)}), "throughput keeps growing")
	assert.Equal(t, -1, loadtest.FindKnee([]loadtest.SweepStep{
		step(1, 100, 10*time.Millisecond), step(2, 101, 14*time.Millisecond)}), "p99 grows less than 50%")
	assert.Equal(t, -1, loadtest.FindKnee(nil))
}

func TestHOLOpenLoopLoad(t *testing.T) {
	// Ensure the load of a head-of-line run is open loop at -load-rate:
	// the same offer whatever the server does, which the text names.
	url := MustServeSerial(t, time.Millisecond)
	h, err := loadtest.RunHOL(t.Context(), loadtest.Config{Concurrency: 2, KeepAlive: true, TimeLimit: 500 * time.Millisecond,
		Warmup: 50 * time.Millisecond, Rate: 40}, 100, url+"/", url+"/slow")
	require.NoError(t, err)
	require.NotNil(t, h.Load.OpenLoop)
	assert.Equal(t, 40.0, h.Load.OpenLoop.TargetRate)
	assert.Greater(t, h.Load.RequestsPerSecond(), 10.0, "the load ran at its rate, give or take a busy machine")
	assert.Equal(t, 100.0, h.ProbeRate)
	assert.Contains(t, loadtest.Text(t, h), "open loop at 40 req/s")
}

func TestSweepSteps(t *testing.T) {
	// Ensure a sweep runs each step at its concurrency for its time limit
	// (measured from the first request to the last completed: on a busy
	// machine well under it, so the bound is generous), the knee's index
	// in range.
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		for readRequest(r) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	// (One of three sweeps must hold: at a load average of 30 a 300 ms
	// step at -c 3 once completed a single request.)
	testkit.Attempts(t, 3, func(t testkit.T) {
		s, err := loadtest.RunSweep(context.Background(), loadtest.Config{KeepAlive: true, TimeLimit: 300 * time.Millisecond}, url, []int{1, 3})
		require.NoError(t, err)
		require.Len(t, s.Steps, 2)
		for i, c := range []int{1, 3} {
			assert.Equal(t, c, s.Steps[i].Concurrency)
			assert.Equal(t, c, s.Steps[i].Result.ConcurrencyLevel)
			assert.GreaterOrEqual(t, s.Steps[i].Result.TimeTaken, 100*time.Millisecond)
			assert.Less(t, s.Steps[i].Result.TimeTaken, 5*time.Second)
			assert.Greater(t, s.Steps[i].Result.CompleteRequests, int64(c), "more than one round of requests")
		}
		assert.True(t, s.Knee >= -1 && s.Knee < 2)
	})
}
