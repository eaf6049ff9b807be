package loadtest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustServeStalling starts a server that stalls every request for the first
// stall of each second (from its start): a request arriving then waits
// until the stall is over, as with a server whose every connection freezes
// during a garbage collection or a long loop turn.
func MustServeStalling(tb testing.TB, stall time.Duration) string {
	start := time.Now()
	return MustServe(tb, func(w http.ResponseWriter, r *http.Request) {
		if p := time.Since(start) % time.Second; p < stall {
			time.Sleep(stall - p)
		}
		io.WriteString(w, "ok")
	})
}

// percentile returns the row for percent from ps.
func percentile(tb testing.TB, ps []loadtest.Percentile, percent float64) time.Duration {
	tb.Helper()
	for _, p := range ps {
		if p.Percent == percent {
			return p.Latency
		}
	}
	tb.Fatalf("no %v%% row in %v", percent, ps)
	return 0
}

func TestOpenLoopCorrectsCoordinatedOmission(t *testing.T) {
	url := MustServeStalling(t, 200*time.Millisecond)
	// Ensure against a server that stalls 200 ms of every second, the open
	// loop's corrected p99 shows the stall (requests due during it wait up
	// to 200 ms) while the closed loop, which sends nothing during a stall,
	// reports far less; the uncorrected figure is kept beside. (The
	// closed loop has one request of each connection caught by each
	// stall, 32 at most in its run: its p99 misses the stall only when
	// it sent over 100 times that, which a busy machine may not: 202 ms
	// against a corrected 240 ms in a fresh clone's make test. Then its
	// p99 is logged.)
	open := mustRun(t, loadtest.Config{URL: url, Rate: 500, Concurrency: 8, KeepAlive: true, TimeLimit: 2100 * time.Millisecond})
	closed := mustRun(t, loadtest.Config{URL: url, Concurrency: 8, KeepAlive: true, TimeLimit: 2100 * time.Millisecond})

	require.NotNil(t, open.OpenLoop)
	corrected := percentile(t, open.Percentiles, 99)
	assert.GreaterOrEqual(t, corrected, 150*time.Millisecond, "corrected p99")
	if caught := int64(8 * 4); closed.CompleteRequests > 100*caught {
		assert.Less(t, percentile(t, closed.Percentiles, 99), corrected/2, "closed-loop p99")
	} else {
		t.Logf("the closed loop sent %d requests, too few for its p99 to miss the stall: %v (corrected %v)",
			closed.CompleteRequests, percentile(t, closed.Percentiles, 99), corrected)
	}
	assert.Nil(t, closed.OpenLoop)
	assert.Len(t, open.OpenLoop.Uncorrected, len(open.Percentiles))
	assert.LessOrEqual(t, percentile(t, open.OpenLoop.Uncorrected, 90), percentile(t, open.Percentiles, 90))
	assert.Positive(t, open.OpenLoop.Late, "requests due during a stall are sent late")
	assert.Greater(t, open.OpenLoop.MaxLateness, 100*time.Millisecond)
	assert.Zero(t, open.FailedRequests)

	var b bytes.Buffer
	b.WriteString(loadtest.Text(t, open))
	assert.Contains(t, b.String(), "corrected for coordinated omission")
	assert.Regexp(t, `corrected +uncorrected\n`, b.String())
	assert.Regexp(t, `\n  99% +\d+ +[\d.]+\n`, b.String(), "the 99% row has both figures")
	assert.Contains(t, b.String(), "Sent late:")
}

func TestOpenLoopKeepsRate(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	// Ensure against a fast server the schedule holds the target rate
	// within 5% over a time limit, and paces a request count too: never
	// ahead of the schedule. A busy machine can make it late: then every
	// request due was still sent or counted as never sent, and the result
	// says it fell short (three busy loops beside make test: 12% short).
	// (A modest rate: the test's server shares the process and, with -race,
	// a machine that other builds keep busy.)
	res := mustRun(t, loadtest.Config{URL: url, Rate: 300, Concurrency: 4, KeepAlive: true, TimeLimit: time.Second})
	require.NotNil(t, res.OpenLoop)
	assert.InEpsilon(t, 300, res.CompleteRequests+res.OpenLoop.Unsent, 0.05, "every request due, sent or not")
	if !res.FellShort() {
		assert.InEpsilon(t, 300, res.RequestsPerSecond(), 0.05)
	} else {
		t.Logf("the machine made the schedule late: %.0f req/s, %d never sent, %d late", res.RequestsPerSecond(), res.OpenLoop.Unsent, res.OpenLoop.Late)
	}

	res = mustRun(t, loadtest.Config{URL: url, Rate: 1000, Concurrency: 4, KeepAlive: true, Requests: 500})
	assert.EqualValues(t, 500, res.CompleteRequests)
	assert.GreaterOrEqual(t, res.TimeTaken, 499*time.Millisecond, "not sent ahead of the schedule")
	assert.Less(t, res.TimeTaken, 10*time.Second, "a ceiling for a hang, not a measure")
	assert.Zero(t, res.FailedRequests)
}

func TestOpenLoopFallsShort(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		io.WriteString(w, "slow")
	})
	// Ensure a server that cannot keep up (one connection, 10 ms a
	// request, 500 due a second) is reported: the achieved rate fell short,
	// most requests were sent late, and the corrected latency grows.
	// 2 s, not less: with the whole suite running beside it on 2 cores a
	// 500 ms run once completed no request at all.
	res := mustRun(t, loadtest.Config{URL: url, Rate: 500, KeepAlive: true, TimeLimit: 2 * time.Second})
	require.NotZero(t, res.CompleteRequests)
	assert.True(t, res.FellShort())
	assert.Less(t, res.RequestsPerSecond(), 150.0)
	assert.Greater(t, res.OpenLoop.Late, res.CompleteRequests/2)
	assert.Greater(t, res.OpenLoop.Unsent, res.CompleteRequests, "most of the 1000 due never found the connection free")
	assert.Greater(t, res.OpenLoop.Corrected.Max, 5*res.Total.Max/2)
	var b bytes.Buffer
	b.WriteString(loadtest.Text(t, res))
	assert.Contains(t, b.String(), "WARNING: the achieved rate fell short of the target")
	assert.Regexp(t, `Never sent: +\d+ requests due in the time limit`, b.String())
}

func TestTimeline(t *testing.T) {
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) { writePage(w) })
	// Ensure Timeline keeps one entry per second with its requests and
	// percentiles, the uncorrected ones too under Rate. (A machine busy
	// enough to make the schedule late, 338 requests in the first second
	// at a load average of 30, must let one of three runs hold the rate.)
	var res *loadtest.Result
	testkit.Attempts(t, 3, func(t testkit.T) {
		var err error
		res, err = loadtest.Run(context.Background(), loadtest.Config{URL: url, Rate: 400, Concurrency: 2, KeepAlive: true,
			TimeLimit: 1500 * time.Millisecond, Timeline: true})
		require.NoError(t, err)
		require.Len(t, res.Timeline, 2)
		var n int64
		for i, s := range res.Timeline {
			assert.Equal(t, time.Duration(i)*time.Second, s.At)
			assert.Positive(t, s.P50)
			assert.LessOrEqual(t, s.P50, s.P99)
			assert.LessOrEqual(t, s.P99, s.Max+s.Max/50) // 2-digit histogram
			assert.Positive(t, s.UncorrectedP99)
			n += s.Requests
		}
		assert.Equal(t, res.CompleteRequests, n)
		assert.InDelta(t, 400, res.Timeline[0].Requests, 40)
	})
	assert.NotEmpty(t, res.Distribution)
	assert.Equal(t, 100.0, res.Distribution[len(res.Distribution)-1].Percent)
}

func TestOpenLoopClientLateness(t *testing.T) {
	url := MustServePageProcess(t)
	for _, tc := range []struct {
		name string
		late time.Duration // how late the client wakes for each send
	}{{"OK", 0}, {"LateClient", 3 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure against a healthy local server at a low rate, every
			// connection idle when a request is due, the corrected p50 is
			// the uncorrected one within 0.2 ms, however late the client's
			// own timer wakes: its lateness is measured apart, not counted
			// as the server's. (A machine busy enough to slow the server
			// keeps its connections busy, which the corrected figure
			// rightly counts: 3 of 3 runs beside three busy loops at a load
			// average of 30 were off by 0.3 to 517 ms. One of three runs
			// must hold.)
			cfg := loadtest.WithLateWakeups(loadtest.Config{URL: url, Rate: 50, Concurrency: 4, KeepAlive: true,
				TimeLimit: time.Second}, tc.late)
			testkit.Attempts(t, 3, func(t testkit.T) {
				res, err := loadtest.Run(context.Background(), cfg)
				require.NoError(t, err)
				require.NotNil(t, res.OpenLoop)
				corrected, uncorrected := res.Percentiles[0].Latency, res.OpenLoop.Uncorrected[0].Latency
				require.Equal(t, 50.0, res.Percentiles[0].Percent)
				assert.InDelta(t, uncorrected.Seconds(), corrected.Seconds(), (200 * time.Microsecond).Seconds(),
					"corrected p50 %v, uncorrected %v", corrected, uncorrected)
				assert.GreaterOrEqual(t, res.OpenLoop.ClientLateness.Median, tc.late, "the client's lateness is measured")
			})
		})
	}
}

func TestOpenLoopDrains(t *testing.T) {
	start := time.Now()
	url := MustServe(t, func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) > 250*time.Millisecond {
			time.Sleep(500 * time.Millisecond) // the stall comes at the end of the run
		}
		io.WriteString(w, "ok")
	})
	// Ensure the requests an open loop sent before its time limit are
	// waited for and counted, with their long waits, not abandoned: the
	// longest waits are those still running at the end.
	res := mustRun(t, loadtest.Config{URL: url, Rate: 40, Concurrency: 4, KeepAlive: true, TimeLimit: 400 * time.Millisecond})
	assert.Zero(t, res.FailedRequests)
	assert.GreaterOrEqual(t, res.OpenLoop.Corrected.Max, 450*time.Millisecond, "the stalled requests are counted")
	assert.Greater(t, res.TimeTaken, 600*time.Millisecond)
	assert.Equal(t, int64(16), res.CompleteRequests+res.OpenLoop.Unsent, "every request due in 400 ms at 40 a second")
}
