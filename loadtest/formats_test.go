package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readHLog reads an interval log back with HdrHistogram's own reader.
func readHLog(tb testing.TB, path string) []*hdrhistogram.Histogram {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var out []*hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		require.NoError(tb, err)
		if h == nil {
			return out
		}
		out = append(out, h)
	}
}

func TestHLogOfARun(t *testing.T) {
	// Ensure -hlog writes a run's seconds as an interval log HdrHistogram
	// reads back: one interval a second of the Timeline, in order, their
	// counts adding up to the run's requests and each second's the
	// Timeline's.
	url := cannedServer(t, 100)
	res, err := Run(t.Context(), Config{URL: url, Rate: 300, TimeLimit: 2500 * time.Millisecond, Concurrency: 2, KeepAlive: true, Timeline: true})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "run.hlog")
	require.Equal(t, 0, Print(res, PrintOptions{HLog: path, Stdout: io.Discard, Stderr: io.Discard}))
	ivs := readHLog(t, path)
	require.Len(t, ivs, len(res.Timeline))
	var total int64
	for i, iv := range ivs {
		total += iv.TotalCount()
		assert.Equal(t, res.Timeline[i].Requests, iv.TotalCount(), "second %d", i)
		assert.Empty(t, iv.Tag(), "one series: no tag")
		if i > 0 {
			assert.Greater(t, iv.StartTimeMs(), ivs[i-1].StartTimeMs())
		}
	}
	assert.Equal(t, res.CompleteRequests, total)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "#[Histogram log format version 1.3]")
	assert.Contains(t, string(b), "#[StartTime: ")
}

func TestHLogTagsSeries(t *testing.T) {
	// Ensure a result of several series tags each interval with its
	// series' name, in time order across them.
	url := cannedServer(t, 10)
	g, err := RunGap(t.Context(), Config{Requests: 200, Concurrency: 2, Timeline: true}, url, url+"game")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "gap.hlog")
	require.Equal(t, 0, Print(g, PrintOptions{HLog: path, Stdout: io.Discard, Stderr: io.Discard}))
	ivs := readHLog(t, path)
	counts := map[string]int64{}
	for i, iv := range ivs {
		counts[iv.Tag()] += iv.TotalCount()
		if i > 0 {
			assert.GreaterOrEqual(t, iv.StartTimeMs(), ivs[i-1].StartTimeMs())
		}
	}
	assert.Equal(t, map[string]int64{"static": 200, "dynamic": 200}, counts)
}

func TestHLogOfUsers(t *testing.T) {
	// Ensure a virtual-user run with Timeline logs each step's windows,
	// tagged by step, adding up to the step's count.
	url := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	res, err := RunUsers(t.Context(), UsersConfig{URL: url, Arrival: Arrival{Rate: 40, Over: time.Second}, Window: 250 * time.Millisecond,
		Timeline: true, Scenario: func(ctx context.Context, u *User) error {
			_, err := u.Get(ctx, "a", "/")
			if err == nil {
				_, err = u.Get(ctx, "b", "/b")
			}
			return err
		}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "users.hlog")
	require.Equal(t, 0, Print(res, PrintOptions{HLog: path, Stdout: io.Discard, Stderr: io.Discard}))
	counts := map[string]int64{}
	for _, iv := range readHLog(t, path) {
		counts[iv.Tag()] += iv.TotalCount()
	}
	assert.Equal(t, res.Step("a").Count, counts["a"])
	assert.Equal(t, res.Step("b").Count, counts["b"])
	assert.EqualValues(t, 40, counts["a"])
}

// logLine is one line of a request log.
type logLine struct {
	Start     time.Time `json:"start"`
	LatencyUS int64     `json:"latency_us"`
	Status    int       `json:"status"`
	Bytes     int64     `json:"bytes"`
	Step      string    `json:"step"`
	Error     string    `json:"error"`
}

// readLog parses a request log, every line a JSON object of known fields.
func readLog(tb testing.TB, b []byte) []logLine {
	tb.Helper()
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l logLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		require.NoError(tb, dec.Decode(&l), sc.Text())
		out = append(out, l)
	}
	require.NoError(tb, sc.Err())
	return out
}

func TestRequestLog(t *testing.T) {
	// Ensure RequestLog gets one line per measured request (the warm-up's
	// are not), with the status, the body's bytes, the run's name and a
	// latency within the run's range, each start within the run.
	url := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("missing") {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "0123456789")
	})
	var log bytes.Buffer
	before := time.Now()
	res, err := Run(t.Context(), Config{URL: url + "?x=1", Requests: 300, Concurrency: 3, KeepAlive: true, Warmup: 50 * time.Millisecond,
		RequestLog: &log})
	require.NoError(t, err)
	lines := readLog(t, log.Bytes())
	require.Len(t, lines, 300)
	var most int64
	for _, l := range lines {
		assert.Equal(t, 200, l.Status)
		assert.EqualValues(t, 10, l.Bytes)
		assert.Equal(t, "/?x=1", l.Step, "the run's name: its path")
		assert.Empty(t, l.Error)
		assert.True(t, l.Start.After(before) && l.Start.Before(time.Now()), "%v", l.Start)
		most = max(most, l.LatencyUS)
	}
	assert.Equal(t, res.Total.Max.Microseconds(), most, "the longest line is the run's longest request")

	log.Reset()
	_, err = Run(t.Context(), Config{URL: url + "?missing", Requests: 5, RequestLog: &log})
	require.NoError(t, err)
	for _, l := range readLog(t, log.Bytes()) {
		assert.Equal(t, 404, l.Status, "a non-2xx response is logged with its status")
	}
}

func TestRequestLogFailures(t *testing.T) {
	// Ensure a failed request's line says why, with status 0.
	url := MustServeRaw(t, func(c net.Conn, r *bufio.Reader) {
		r.ReadString('\n')
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"))
	})
	var log bytes.Buffer
	res, err := Run(t.Context(), Config{URL: url, Requests: 3, ContinueOnReceiveError: true, RequestLog: &log})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Failures.Receive)
	lines := readLog(t, log.Bytes())
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.Zero(t, l.Status)
		assert.NotEmpty(t, l.Error)
	}
}

func TestRequestLogOpenLoop(t *testing.T) {
	// Ensure under Rate each line's latency is the corrected one, counted
	// from when the request was due: a stalled server's queued requests
	// show their wait.
	var mu sync.Mutex
	stalled := false
	url := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !stalled
		stalled = true
		mu.Unlock()
		if first {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(w, "ok")
	})
	var log bytes.Buffer
	res, err := Run(t.Context(), Config{URL: url, Rate: 100, TimeLimit: time.Second, Concurrency: 1, KeepAlive: true, RequestLog: &log})
	require.NoError(t, err)
	lines := readLog(t, log.Bytes())
	require.EqualValues(t, res.CompleteRequests, len(lines))
	var over int
	for _, l := range lines {
		if l.LatencyUS >= 100_000 {
			over++
		}
	}
	assert.GreaterOrEqual(t, over, 10, "requests due during the 300 ms stall waited for it")
	assert.Equal(t, res.OpenLoop.Corrected.Max.Microseconds(), maxLatency(lines))
}

func maxLatency(lines []logLine) int64 {
	var m int64
	for _, l := range lines {
		m = max(m, l.LatencyUS)
	}
	return m
}

func TestRequestLogScenarios(t *testing.T) {
	// Ensure each run of a scenario names its lines: the gap's pages, the
	// head-of-line probe and load (written from two runs at once, whole
	// lines each), a sweep's steps.
	url := cannedServer(t, 10)
	var log bytes.Buffer
	_, err := RunGap(t.Context(), Config{Requests: 20, RequestLog: &log}, url, url+"x")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"static": 20, "dynamic": 20}, stepCounts(readLog(t, log.Bytes())))

	log.Reset()
	h, err := RunHOL(t.Context(), Config{Concurrency: 2, KeepAlive: true, TimeLimit: 300 * time.Millisecond, RequestLog: &log}, 100, url, url+"x")
	require.NoError(t, err)
	counts := stepCounts(readLog(t, log.Bytes()))
	assert.EqualValues(t, h.Alone.CompleteRequests, counts["probe alone"])
	assert.EqualValues(t, h.UnderLoad.CompleteRequests, counts["probe under load"])
	assert.EqualValues(t, h.Load.CompleteRequests, counts["load"])

	log.Reset()
	s, err := RunSweep(t.Context(), Config{TimeLimit: 100 * time.Millisecond, KeepAlive: true, RequestLog: &log}, url, []int{1, 2})
	require.NoError(t, err)
	counts = stepCounts(readLog(t, log.Bytes()))
	assert.EqualValues(t, s.Steps[0].Result.CompleteRequests, counts["/ -c 1"])
	assert.EqualValues(t, s.Steps[1].Result.CompleteRequests, counts["/ -c 2"])
}

func stepCounts(lines []logLine) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		m[l.Step]++
	}
	return m
}

func TestRequestLogOfUsers(t *testing.T) {
	// Ensure a virtual-user run logs each request and stream opened under
	// its step, with its status: a 404 with its error.
	url := MustServeHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "page")
	})
	var log bytes.Buffer
	res, err := RunUsers(t.Context(), UsersConfig{URL: url, Arrival: Arrival{From: 5, To: 5}, RequestLog: &log,
		Scenario: func(ctx context.Context, u *User) error {
			if _, err := u.Get(ctx, "page", "/"); err != nil {
				return err
			}
			u.Get(ctx, "missing", "/missing")
			return nil
		}})
	require.NoError(t, err)
	lines := readLog(t, log.Bytes())
	require.Len(t, lines, 10)
	for _, l := range lines {
		switch l.Step {
		case "page":
			assert.Equal(t, 200, l.Status)
			assert.EqualValues(t, 4, l.Bytes)
		case "missing":
			assert.Equal(t, 404, l.Status)
			assert.Contains(t, l.Error, "status 404")
		default:
			t.Errorf("step %q", l.Step)
		}
	}
	assert.Equal(t, map[int]int64{404: 5}, res.Step("missing").StatusCodes)
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRequestLogWriteError(t *testing.T) {
	// Ensure a request log that cannot be written is an error beside the
	// run's figures, not a lost run.
	url := cannedServer(t, 10)
	res, err := Run(t.Context(), Config{URL: url, Requests: 10, RequestLog: failingWriter{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "request log: disk full")
	require.NotNil(t, res)
	assert.EqualValues(t, 10, res.CompleteRequests)

	res2, err := RunUsers(t.Context(), UsersConfig{URL: url, Arrival: Arrival{From: 1, To: 1}, RequestLog: failingWriter{},
		Scenario: func(ctx context.Context, u *User) error { _, err := u.Get(ctx, "a", "/"); return err }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "request log: disk full")
	assert.EqualValues(t, 1, res2.Step("a").Count)
}

func TestAppendRequestLine(t *testing.T) {
	// Ensure a line is one JSON object with the step and error escaped.
	at := time.Date(2026, 12, 7, 5, 21, 3, 123456000, time.UTC)
	line := appendRequestLine(nil, at, 1234567*time.Nanosecond, 200, 2752, jsonString(`static "/"`), errors.New("reset\n by peer"))
	assert.Equal(t, `{"start":"2026-12-07T05:21:03.123456Z","latency_us":1234,"status":200,"bytes":2752,"step":"static \"/\"","error":"reset\n by peer"}`+"\n",
		string(line))
	line = appendRequestLine(nil, at, -time.Second, 0, 0, jsonString(""), nil)
	assert.Equal(t, `{"start":"2026-12-07T05:21:03.123456Z","latency_us":0,"status":0,"bytes":0,"step":""}`+"\n", string(line))
}

func TestHLogWithoutIntervals(t *testing.T) {
	// Ensure a result that kept no intervals (no Timeline) writes a log
	// with its header and no interval, which HdrHistogram reads as empty,
	// and keeps no per-window histograms in memory.
	url := cannedServer(t, 10)
	res, err := Run(t.Context(), Config{URL: url, Requests: 20})
	require.NoError(t, err)
	assert.Nil(t, res.intervals)
	path := filepath.Join(t.TempDir(), "run.hlog")
	require.Equal(t, 0, Print(res, PrintOptions{HLog: path, Stdout: io.Discard, Stderr: io.Discard}))
	assert.Empty(t, readHLog(t, path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`)

	users, err := RunUsers(t.Context(), UsersConfig{URL: url, Arrival: Arrival{From: 2, To: 2}, Window: 10 * time.Millisecond,
		Hold: 100 * time.Millisecond, Scenario: func(ctx context.Context, u *User) error {
			_, err := u.Get(ctx, "a", "/")
			<-ctx.Done() // until the hold is over
			return err
		}})
	require.NoError(t, err)
	assert.Empty(t, users.intervals, "no Timeline, no windows' histograms kept")
	assert.NotEmpty(t, users.Windows)
}

func TestHGRMFileNames(t *testing.T) {
	// Ensure several series' files take their names before the
	// extension, or after the name when it has none, and one series the
	// name as given.
	dir := t.TempDir()
	series := []histogram{{name: "probe under load"}, {name: "load"}}
	require.NoError(t, writeHGRMFiles(filepath.Join(dir, "f"), series))
	require.NoError(t, writeHGRMFiles(filepath.Join(dir, "g.hgrm"), series))
	require.NoError(t, writeHGRMFiles(filepath.Join(dir, "one.hgrm"), series[:1]))
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	assert.ElementsMatch(t, []string{"f-probe-under-load", "f-load", "g-probe-under-load.hgrm", "g-load.hgrm", "one.hgrm"}, names)
}
