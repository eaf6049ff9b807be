package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCauseMap(t *testing.T) {
	// Ensure an event's delivery counts from its key's write, an event
	// before its write is kept until the write comes (and counted if it
	// arrived after the write began), a write older than the TTL counts
	// nothing, and the pending arrivals are bounded.
	c := newCauseMap(time.Second)
	at := time.Now()
	_, ok := c.delay([]byte("k"), at.Add(5*time.Millisecond))
	assert.False(t, ok, "no write yet: kept")
	early := c.put("k", at)
	assert.Equal(t, []time.Time{at.Add(5 * time.Millisecond)}, early, "the early arrival, counted when its cause came")
	d, ok := c.delay([]byte("k"), at.Add(20*time.Millisecond))
	assert.True(t, ok)
	assert.Equal(t, 20*time.Millisecond, d)
	_, ok = c.delay([]byte("k"), at.Add(2*time.Second))
	assert.False(t, ok, "past the TTL")
	_, ok = c.delay([]byte("k"), at.Add(-time.Millisecond))
	assert.False(t, ok, "before its cause: not this write's")

	c.delay([]byte("before"), at.Add(-time.Millisecond))
	assert.Empty(t, c.put("before", at), "an arrival before the write began is not its event")

	for i := range maxPending + 10 {
		c.delay([]byte("flood"), at.Add(time.Duration(i)))
	}
	assert.Len(t, c.put("flood", at), maxPending, "at most maxPending arrivals kept for a key")
}

func TestCauseMapSweeps(t *testing.T) {
	// Ensure writes and pending arrivals older than the TTL are dropped
	// once a TTL has passed.
	c := newCauseMap(100 * time.Millisecond)
	at := time.Now()
	c.put("old", at)
	c.delay([]byte("orphan"), at)
	c.put("new", at.Add(time.Second)) // sweeps its shard; the others sweep on their next use
	for i := range c.shards {
		sh := &c.shards[i]
		sh.sweep(at.Add(time.Second), c.ttl)
		_, hasOld := sh.m["old"]
		_, hasOrphan := sh.pending["orphan"]
		assert.False(t, hasOld || hasOrphan, "shard %d kept what is past the TTL", i)
	}
}

func TestStepStats(t *testing.T) {
	// Ensure a step's figures add up: latencies corrected and uncorrected,
	// errors with and without a latency, statuses, lateness, each window's
	// figures and histogram, and what ended after the last window.
	s := newStepStats("page", true)
	start := time.Now()
	for i := range 100 {
		s.record(time.Duration(i+1)*time.Millisecond, time.Millisecond, 200, false)
	}
	s.record(500*time.Millisecond, 400*time.Millisecond, 503, true)
	s.fail()
	s.late(3 * time.Millisecond)
	w := s.closeWindow(start, start.Add(time.Second))
	assert.Equal(t, "page", w.Step)
	assert.EqualValues(t, 101, w.Count)
	assert.EqualValues(t, 2, w.Errors)
	assert.InDelta(t, 51, ms(w.P50), 1)
	assert.InDelta(t, 500, ms(w.Max), 5)
	s.record(7*time.Millisecond, 7*time.Millisecond, 200, false)
	s.keepTail(start.Add(time.Second), start.Add(1500*time.Millisecond))
	r := s.result(2 * time.Second)
	assert.EqualValues(t, 102, r.Count)
	assert.EqualValues(t, 2, r.Errors)
	assert.InDelta(t, 51, r.Rate, 1e-9)
	assert.Equal(t, map[int]int64{200: 101, 503: 1}, r.StatusCodes)
	assert.Equal(t, 500*time.Millisecond, r.Latency.Max)
	assert.InDelta(t, 3, ms(r.LatenessMax), 0.1)
	require.Len(t, r.Uncorrected, len(percentiles))
	assert.InDelta(t, 400, ms(r.Uncorrected[len(r.Uncorrected)-1].Latency), 0.4, "the histogram's maximum, within 0.1%")
	require.Len(t, s.wins, 2, "the window and the tail")
	assert.EqualValues(t, 101, s.wins[0].TotalCount())
	assert.EqualValues(t, 1, s.wins[1].TotalCount())
	assert.Equal(t, start.Add(time.Second).UnixMilli(), s.wins[1].StartTimeMs())
	assert.EqualValues(t, 102, r.hist.TotalCount())
}

func TestStopRule(t *testing.T) {
	// Ensure the stop rule counts failing windows in a row, resets on one
	// that holds, checks nothing within MinWindows, and names the first
	// failing window.
	cfg := UsersConfig{StopWhen: mustThresholds(t, "errors==0"), StopAfter: 2, MinWindows: 1}
	bad := Window{Steps: []WindowStep{{Step: "a", Count: 1, Errors: 1}}}
	good := Window{Steps: []WindowStep{{Step: "a", Count: 1}}}
	var rule stopRule
	res := &UsersResult{}
	var stopped []bool
	for _, w := range []Window{bad, bad, good, bad, bad} {
		res.Windows = append(res.Windows, w)
		stopped = append(stopped, rule.stops(cfg, res))
	}
	assert.Equal(t, []bool{false, false, false, false, true}, stopped, "the first window is within MinWindows")
	assert.Equal(t, 3, res.BrokeAt)
	assert.Equal(t, "errors==0 (a: 1)", res.Broke)
}

func TestLagFigures(t *testing.T) {
	// Ensure the lag's p99 interpolates within the bucket holding it, as
	// histogram_quantile does, and the top is the highest bucket that
	// grew (its lower bound when that is +Inf).
	inf := math.Inf(1)
	before := map[float64]uint64{0.001: 10, 0.01: 10, 0.1: 10, inf: 10}
	after := map[float64]uint64{0.001: 60, 0.01: 109, 0.1: 110, inf: 110}
	p99, top, open := lagFigures(before, after)
	assert.InDelta(t, 0.01, p99.Seconds(), 1e-6, "the 99th of 100 is the last of the 10 ms bucket")
	assert.Equal(t, 100*time.Millisecond, top)
	assert.False(t, open)
	after[inf] = 111
	_, top, open = lagFigures(before, after)
	assert.True(t, open)
	assert.Equal(t, 100*time.Millisecond, top, "the +Inf bucket's lower bound")
	p99, _, _ = lagFigures(before, map[float64]uint64{0.001: 60, 0.01: 60, 0.1: 60, inf: 110})
	assert.Equal(t, 100*time.Millisecond, p99, "a p99 in the +Inf bucket is its lower bound")
	p99, top, _ = lagFigures(before, before)
	assert.Zero(t, p99, "nothing grew")
	assert.Zero(t, top)
	p99, _, _ = lagFigures(nil, nil)
	assert.Zero(t, p99)
}

func TestBuckets(t *testing.T) {
	// Ensure a histogram's series are added up by bound, and a series
	// without a +Inf bucket gets one of its sample count (every sample
	// is at most +Inf).
	series := func(count uint64, bs ...float64) *dto.Metric {
		h := &dto.Histogram{SampleCount: &count}
		for i := 0; i < len(bs); i += 2 {
			c := uint64(bs[i+1])
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &bs[i], CumulativeCount: &c})
		}
		return &dto.Metric{Histogram: h}
	}
	inf := math.Inf(1)
	f := &dto.MetricFamily{Metric: []*dto.Metric{series(7, 0.1, 5), series(4, 0.1, 1, 1, 3, inf, 4)}}
	assert.Equal(t, map[float64]uint64{0.1: 6, 1: 3, inf: 11}, buckets(f))
	assert.Nil(t, buckets(nil), "no family, no histogram")
}

func TestRunMax(t *testing.T) {
	// Ensure a run's maximum is exact when the run raised the server's
	// all-time maximum, else a bound from the histogram or the maximum.
	nan := math.NaN()
	for _, tc := range []struct {
		before, after float64
		top           time.Duration
		hist          bool
		want          time.Duration
		bound         bool
	}{
		{0.01, 0.02, 50 * time.Millisecond, true, 20 * time.Millisecond, false},
		{0.02, 0.02, 5 * time.Millisecond, true, 5 * time.Millisecond, true},
		{0.02, 0.02, 50 * time.Millisecond, true, 20 * time.Millisecond, true},
		{nan, nan, 5 * time.Millisecond, true, 5 * time.Millisecond, true},
		{0.02, 0.02, 0, false, 20 * time.Millisecond, true},
		{nan, nan, 0, false, 0, false},
	} {
		got, bound := runMax(tc.before, tc.after, tc.top, tc.hist)
		assert.Equal(t, tc.want, got, "%+v", tc)
		assert.Equal(t, tc.bound, bound, "%+v", tc)
	}
}

func TestScrapeErrors(t *testing.T) {
	// Ensure an endpoint that is not a metrics page is an error naming it,
	// and a run keeps its figures with the error in Loop.
	notFound := MustServeHTTP(t, http.NotFound)
	garbage := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "metric{ broken\n") })
	for _, u := range []string{notFound + "/metrics", garbage + "/metrics", "http://127.0.0.1:1/metrics"} {
		_, err := scrape(t.Context(), u)
		assert.Error(t, err, u)
	}
	_, err := scrape(t.Context(), notFound+"/metrics")
	assert.Contains(t, err.Error(), "404 Not Found")
	res, err := Run(t.Context(), Config{URL: cannedServer(t, 10), Requests: 5, MetricsURL: notFound + "/metrics"})
	require.NoError(t, err)
	require.NotNil(t, res.Loop)
	assert.Contains(t, res.Loop.Error, "404")
	assert.EqualValues(t, 5, res.CompleteRequests)
}

func TestScrapeSums(t *testing.T) {
	// Ensure a family's series are added up (or their maximum taken) and
	// a missing family reads as NaN, figures left at zero.
	url := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# TYPE gameserver_slow_requests_total counter\n"+
			"gameserver_slow_requests_total{h=\"a\"} 2\ngameserver_slow_requests_total{h=\"b\"} 3\n"+
			"# TYPE gameserver_loop_longest_turn_seconds gauge\n"+
			"gameserver_loop_longest_turn_seconds{w=\"1\"} 0.5\ngameserver_loop_longest_turn_seconds{w=\"2\"} 0.25\n"+
			"gameserver_requests_total 7\n")
	})
	s, err := scrape(t.Context(), url)
	require.NoError(t, err)
	assert.Equal(t, 5.0, s.slowRequests)
	assert.Equal(t, 0.5, s.longestTurn)
	assert.Equal(t, 7.0, s.requests, "untyped")
	assert.True(t, math.IsNaN(s.busy))
	assert.Nil(t, s.lag)
	l := loopBetween(s, s)
	assert.Zero(t, l.Utilization)
	assert.Zero(t, l.SlowRequests)
}

func TestEnvelopeVersions(t *testing.T) {
	// Ensure ReadEnvelope reads the current form, the bare results of
	// version 1 (an object, or a sweep's array), and refuses a newer
	// version or what is no JSON.
	e, err := ReadEnvelope([]byte(`{"kind": "run", "schema_version": 3, "results": {"a": 1}}`))
	require.NoError(t, err)
	assert.Equal(t, "run", e.Kind)
	assert.JSONEq(t, `{"a": 1}`, string(e.Results))
	e, err = ReadEnvelope([]byte(`{"complete_requests": 3}`))
	require.NoError(t, err)
	assert.Equal(t, 1, e.SchemaVersion)
	assert.Empty(t, e.Kind)
	e, err = ReadEnvelope([]byte(` [{"url": "/"}]`))
	require.NoError(t, err)
	assert.Equal(t, 1, e.SchemaVersion)
	_, err = ReadEnvelope([]byte(`{"kind": "run", "schema_version": 4}`))
	assert.ErrorContains(t, err, "schema version 4 is newer than this program's 3")
	_, err = ReadEnvelope([]byte(`not json`))
	assert.Error(t, err)
	_, err = ReadEnvelope([]byte(`{"kind": ["run"], "schema_version": 3}`))
	assert.ErrorContains(t, err, "cannot unmarshal array", "an envelope whose fields are not of their types")
}

func TestSettingsRedact(t *testing.T) {
	// Ensure the settings record a run's flags, a credential header's
	// value replaced.
	s := SettingsOf(Config{Concurrency: 4, TimeLimit: 1500 * time.Millisecond, Warmup: time.Second, Timeout: 30 * time.Second,
		KeepAlive: true, Headers: []string{"Cookie: a=b", "authorization: Bearer x", "X-Test: 1"}, Body: []byte("abc"), Rate: 50},
		"http://h/")
	assert.Equal(t, []string{"Cookie: REDACTED", "authorization: REDACTED", "X-Test: 1"}, s.Headers)
	assert.Equal(t, 1.5, s.TimeLimit)
	assert.Equal(t, 3, s.BodyBytes)
	assert.Equal(t, 50.0, s.Rate)
	u := UsersConfig{URL: "http://h", Arrival: Arrival{Rate: 10, Over: 2 * time.Second}, Hold: time.Second}.Settings()
	assert.Equal(t, 20, u.Concurrency)
	assert.Equal(t, 3.0, u.TimeLimit)
	assert.Equal(t, 30.0, u.Timeout, "the default timeout")
}

func TestJSONKeyed(t *testing.T) {
	// Ensure a percentage table is an object keyed by its rows in the
	// table's order, and an empty one an empty object.
	b, err := jsonKeyed{{50, ms2(1.5)}, {99.9, ms2(20)}, {100, 30 * time.Millisecond}}.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"p50":1.5,"p99.9":20,"p100":30}`, string(b))
	b, err = jsonKeyed(nil).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
}

func TestFormats(t *testing.T) {
	// Ensure the small formats of the text reports.
	assert.Equal(t, "0.25", formatMS(250*time.Microsecond))
	assert.Equal(t, "3", formatMS(2500*time.Microsecond), "ab's rounding from 1 ms up")
	assert.Equal(t, "12.35", formatMSDecimals(12345*time.Microsecond))
	assert.Equal(t, "<= 5.00", boundMS(5*time.Millisecond, true))
	assert.Equal(t, "5.00", boundMS(5*time.Millisecond, false))
	assert.Equal(t, "-", formatCPU(time.Millisecond, 0))
	assert.Equal(t, "45.2 us", formatCPU(45200*time.Nanosecond, time.Second))
	assert.Equal(t, "9.80 ms", formatCPU(9800*time.Microsecond, time.Second))
	assert.Equal(t, "99.9%", percentLabel(99.9))
	assert.Equal(t, "/game?function=hq&tid=0123456...", shorten("/game?function=hq&tid=0123456789abcdef"))
	assert.Equal(t, "ramp 0 to 10 over 5s, held 1s", arrivalText(Arrival{To: 10, Over: 5 * time.Second}, time.Second))
	assert.Equal(t, "2.5/s over 4s", arrivalText(Arrival{Rate: 2.5, Over: 4 * time.Second}, 0))
	assert.Equal(t, "all", tagOf(""))
	assert.Equal(t, "probe-under-load", tagOf("probe under load"))
	assert.Equal(t, "-game-x", tagOf("/game,x"))
}

func TestWriteReportOpenLoop(t *testing.T) {
	// Ensure an open-loop report adds the uncorrected column, the
	// schedule's figures, the unsent requests and, when the achieved rate
	// fell short, the warning; and a TLS run ab's protocol line.
	res := seedStatic()
	res.TLSProtocol = "TLS 1.3,TLS_AES_128_GCM_SHA256"
	res.OpenLoop = &OpenLoop{TargetRate: 100, Uncorrected: res.Percentiles, Late: 3, MaxLateness: ms2(40), Unsent: 7,
		Corrected: Phase{Max: ms2(330)}, ClientLatenessP99: ms2(0.5)}
	text := Text(t, res)
	assert.Contains(t, text, "SSL/TLS Protocol:       TLS 1.3,TLS_AES_128_GCM_SHA256\n")
	assert.Contains(t, text, "       corrected  uncorrected\n")
	assert.Contains(t, text, "Target rate:            100.00 [#/sec]\n")
	assert.Contains(t, text, "Never sent:             7 requests")
	assert.Contains(t, text, "WARNING: the achieved rate fell short of the target (64.61 of 100.00 [#/sec])")
	res.OpenLoop.TargetRate = 65
	assert.NotContains(t, Text(t, res), "WARNING: the achieved rate", "within 5% of the target")
}

func TestWriteLoopTableError(t *testing.T) {
	// Ensure a run whose metrics could not be read says why in its row.
	res := seedStatic()
	res.Loop = &LoopFigures{Error: "connection refused"}
	var b bytes.Buffer
	require.NoError(t, writeLoopTable(&b, []namedResult{{"/", res}, {"none", seedStatic()}}))
	assert.Contains(t, b.String(), "/    metrics not read: connection refused")
	assert.NotContains(t, b.String(), "none", "a run without the server's figures has no row")
}

func TestAbortMessages(t *testing.T) {
	// Ensure an abort reads as ab's line: APR's words and number.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{io.EOF, "apr_socket_recv: End of file found (70014)"},
		{os.ErrDeadlineExceeded, "apr_socket_recv: The timeout specified has expired (70007)"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), "apr_socket_recv: Connection reset by peer (104)"},
		{errors.New("odd"), "apr_socket_recv: odd (20014)"},
	} {
		e := &AbortError{Op: "apr_socket_recv", Err: tc.err}
		assert.Equal(t, tc.want, e.Message())
		assert.Equal(t, "loadtest: aborted: "+tc.want, e.Error())
		assert.ErrorIs(t, e, tc.err)
	}
}

func TestWatchProgress(t *testing.T) {
	// Ensure progress is reported at each tenth of the requests, once
	// each, the last ones when the run stops.
	w := &worker{}
	var got []int64
	stop := watchProgress([]*worker{w}, 100, func(n int64) { got = append(got, n) })
	w.completed.Store(35)
	time.Sleep(3 * progressTick)
	w.completed.Store(100)
	stop()
	assert.Equal(t, []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, got)
	watchProgress([]*worker{w}, 5, func(int64) { t.Error("fewer than ten requests report nothing") })()
}

func TestRunHOLErrors(t *testing.T) {
	// Ensure a scenario that cannot run says which part failed.
	_, err := RunHOL(context.Background(), Config{TimeLimit: 100 * time.Millisecond}, 0, "ftp://x/", "http://127.0.0.1:1/")
	assert.ErrorContains(t, err, "hol: probe alone")
	_, err = RunGap(context.Background(), Config{}, "http://127.0.0.1:1/", "ftp://x/")
	assert.ErrorContains(t, err, "gap: http://127.0.0.1:1/")
	_, err = RunSweep(context.Background(), Config{}, "ftp://x/", []int{1})
	assert.ErrorContains(t, err, "sweep: ftp://x/ at -c 1")
}

func TestGapWithoutReference(t *testing.T) {
	// Ensure a gap without a reference has no reference rows nor JSON,
	// and a dynamic page that completed nothing gives no ratio.
	g := &Gap{Static: seedStatic(), Dynamic: seedStatic()}
	var b bytes.Buffer
	require.NoError(t, g.writeComparison(&b))
	assert.Equal(t, 5, strings.Count(b.String(), "\n"), "a blank line, a heading, the columns and our two rows: %s", b.String())
	b.Reset()
	require.NoError(t, g.writeResults(&b))
	assert.NotContains(t, b.String(), "reference")
	g.Dynamic.CompleteRequests = 0
	assert.Zero(t, g.Ratio())
}

func TestLoopBetweenPartial(t *testing.T) {
	// Ensure a figure is computed only when both scrapes have its metric:
	// a counter that appeared between them, or a run of no time, gives 0.
	nan := math.NaN()
	at := time.Now()
	before := &snapshot{at: at, busy: nan, slowRequests: nan, workTime: 1, cpu: nan, lagMax: nan, longestTurn: nan}
	after := &snapshot{at: at.Add(time.Second), busy: 0.5, slowRequests: 3, workTime: 1.25, cpu: 2, lagMax: nan, longestTurn: nan}
	l := loopBetween(before, after)
	assert.Zero(t, l.Utilization, "no busy counter before")
	assert.Zero(t, l.SlowRequests)
	assert.Equal(t, 250*time.Millisecond, l.WorkTime)
	assert.Zero(t, l.CPU)
	before.busy, after.at = 0.1, at
	assert.Zero(t, loopBetween(before, after).Utilization, "no time between the scrapes")
	before.workTime = 2
	assert.Zero(t, loopBetween(before, after).WorkTime, "a counter that went back (a restart) gives 0, not less")
}

func TestWriteEnvelope(t *testing.T) {
	// Ensure the envelope records the kind, this schema's version, the
	// start in UTC, the version and settings, around the results.
	var b bytes.Buffer
	start := time.Date(2026, 12, 7, 6, 21, 0, 0, time.FixedZone("CET", 3600))
	require.NoError(t, writeEnvelope(&b, seedStatic(), &PrintOptions{StartedAt: start, Version: "v9",
		Settings: Settings{URLs: []string{"http://h/"}, Concurrency: 12, Timeout: 30}}))
	e, err := ReadEnvelope(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, "run", e.Kind)
	assert.Equal(t, SchemaVersion, e.SchemaVersion)
	assert.Equal(t, start.UTC(), e.StartedAt)
	assert.Equal(t, time.UTC, e.StartedAt.Location())
	assert.Equal(t, "v9", e.Version)
	assert.Equal(t, 12, e.Settings.Concurrency)
	assert.Contains(t, string(e.Results), `"complete_requests": 1000`)
}

func TestSanityWarnings(t *testing.T) {
	// Ensure ab's warnings follow its Connection Times table when a row's
	// mean and median are more than one, or two, deviations apart.
	res := seedStatic()
	res.Connect = Phase{Mean: ms2(10), Median: ms2(0), SD: ms2(4)}
	res.Waiting = Phase{Mean: ms2(10), Median: ms2(4), SD: ms2(4)}
	text := Text(t, res)
	assert.Contains(t, text, "ERROR: The median and mean for the initial connection time are more than twice the standard\n"+
		"       deviation apart. These results are NOT reliable.\n")
	assert.Contains(t, text, "WARNING: The median and mean for the waiting time are not within a normal deviation\n"+
		"        These results are probably not that reliable.\n")
	assert.NotContains(t, text, "for the total time")
}

func TestHostPort(t *testing.T) {
	// Ensure a stream dials the port its URL names, else its scheme's
	// default, IPv6 literals bracketed once.
	for _, tc := range []struct{ url, want string }{
		{"http://example.com/events", "example.com:80"},
		{"https://example.com/events", "example.com:443"},
		{"https://127.0.0.1:8443/events", "127.0.0.1:8443"},
		{"http://[::1]/events", "[::1]:80"},
		{"https://[::1]:8443/events", "[::1]:8443"},
	} {
		u, err := url.Parse(tc.url)
		require.NoError(t, err)
		assert.Equal(t, tc.want, hostPort(u), tc.url)
	}
}

func TestNames(t *testing.T) {
	// Ensure a sweep's step is named by its URL's path and query (the
	// whole URL when it does not parse), a step's path that does not
	// parse is taken as it is, and a chart's title is clipped by
	// characters, not bytes.
	assert.Equal(t, "/game?tid=1", requestURI("http://127.0.0.1:8080/game?tid=1"))
	assert.Equal(t, "/", requestURI("http://127.0.0.1:8080"))
	assert.Equal(t, "http://h/%zz", requestURI("http://h/%zz"))
	assert.Equal(t, "/a%zz", mustParse("/a%zz").Path)
	assert.Equal(t, "/a?b=1", mustParse("/a?b=1").RequestURI())
	assert.Equal(t, "héllo", clip("héllo", 5))
	assert.Equal(t, "héll…", clip("héllo wörld", 5))
}
