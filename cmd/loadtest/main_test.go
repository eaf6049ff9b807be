package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MustServe starts a server answering "/" with a short page and "/game"
// with a longer one, and returns its URL.
func MustServe(tb testing.TB) string { return testkit.MustServe(tb, newPages()) }

// newPages answers "/" with a short page and "/game" with a longer one.
func newPages() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "front page") })
	mux.HandleFunc("/game", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "headquarters of "+r.URL.Query().Get("tid")+string(b))
	})
	return mux
}

// runCLI runs the program with args and returns its exit status and output.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // in the message: the flag's name
	}{
		{[]string{"-n", "x", "http://127.0.0.1/"}, "-n"},
		{[]string{"-n", "0", "http://127.0.0.1/"}, "-n"},
		{[]string{"-c", "0", "http://127.0.0.1/"}, "-c"},
		{[]string{"-n", "5", "-c", "10", "http://127.0.0.1/"}, "-c"},
		{[]string{"-t", "soon", "http://127.0.0.1/"}, "-t"},
		{[]string{"-s", "0", "http://127.0.0.1/"}, "-s"},
		{[]string{"-H", "NoColon", "http://127.0.0.1/"}, "-H"},
		{[]string{"-p", "/nonexistent/body", "http://127.0.0.1/"}, "-p"},
		{[]string{"-bogus", "http://127.0.0.1/"}, "-bogus"},
		{[]string{"-rate", "-5", "http://127.0.0.1/"}, "-rate"},
		{[]string{"-B", "localhost", "http://127.0.0.1/"}, "-B"},
		{[]string{"-B", "127.0.0.9-127.0.0.2", "http://127.0.0.1/"}, "-B"},
		{[]string{"-B", "127.0.0.2-::1", "http://127.0.0.1/"}, "-B"},
		{[]string{"-rate", "fast", "http://127.0.0.1/"}, "-rate"},
		{[]string{"-threshold", "p42<1ms", "http://127.0.0.1/"}, `unknown metric "p42"`},
		{[]string{"-threshold", "p99~1ms", "http://127.0.0.1/"}, "-threshold"},
		{[]string{"-threshold", "p99<soon", "http://127.0.0.1/"}, "bad value"},
		{[]string{"sweep", "-c", "4,2", "http://127.0.0.1/"}, "-c"},
		{[]string{"sweep", "-rate", "10", "http://127.0.0.1/"}, "-rate"},
		{[]string{"sweep"}, "URL"},
		{[]string{"hol", "http://127.0.0.1/"}, "URL"},
		{[]string{"-metrics", "ftp://x/metrics", "http://127.0.0.1/"}, `invalid URL "ftp://x/metrics"`},
		{[]string{"-n", "1"}, "URL"},
		{[]string{"gap", "http://127.0.0.1/"}, "URL"},
		{[]string{"ftp://x/"}, `invalid URL "ftp://x/"`},
		{[]string{"127.0.0.1:8080/"}, `invalid URL "127.0.0.1:8080/"`},
		{[]string{"http://127.0.0.1:99999/"}, "invalid port"},
		{[]string{"gap", "http://127.0.0.1/", "ws://127.0.0.1/"}, `invalid URL "ws://127.0.0.1/"`},
		{[]string{"hol", "-load-rate", "-1", "http://127.0.0.1/", "http://127.0.0.1/"}, "-load-rate"},
		{[]string{"-expect", "403,99", "http://127.0.0.1/"}, "-expect"},
	} {
		// Ensure a bad flag exits 2 with a message naming it.
		code, _, stderr := runCLI(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
	}
}

func TestReport(t *testing.T) {
	url := MustServe(t)
	// Ensure a run prints ab's report, with flags before and after the URL
	// as ab accepts them.
	code, stdout, stderr := runCLI("-n", "20", url+"/?x=1", "-c", "2", "-k")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Document Path:          /?x=1\n")
	assert.Contains(t, stdout, "Document Length:        10 bytes\n")
	assert.Contains(t, stdout, "Concurrency Level:      2\n")
	assert.Contains(t, stdout, "Complete requests:      20\n")
	assert.Contains(t, stdout, "Failed requests:        0\n")
	assert.Contains(t, stdout, "Keep-Alive requests:    20\n")
	assert.Contains(t, stdout, " 100%")
	assert.NotContains(t, stderr, "Completed", "no progress when stderr is not a terminal")
}

func TestJSONAndPost(t *testing.T) {
	url := MustServe(t)
	body := filepath.Join(t.TempDir(), "body")
	require.NoError(t, os.WriteFile(body, []byte("+posted"), 0o644))
	// Ensure -json prints the result as JSON in its envelope and -p posts the file.
	code, stdout, stderr := runCLI("-json", "-n", "4", "-p", body, "-T", "text/x-test", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	var env struct {
		Kind     string         `json:"kind"`
		Settings map[string]any `json:"settings"`
		Results  map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env))
	assert.Equal(t, "run", env.Kind)
	assert.EqualValues(t, 7, env.Settings["body_bytes"])
	res := env.Results
	assert.EqualValues(t, 4, res["complete_requests"])
	assert.EqualValues(t, len("headquarters of abc+posted"), res["document_length"])
	assert.Positive(t, res["total_body_sent_bytes"])
}

func TestGap(t *testing.T) {
	url := MustServe(t)
	// Ensure gap prints both reports and the comparison table with the
	// seed's reference row.
	code, stdout, stderr := runCLI("gap", "-c", "2", "-n", "30", "-warmup", "0.05", url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 2, bytes.Count([]byte(stdout), []byte("Server Software:")))
	assert.Contains(t, stdout, "Gap: static vs dynamic, concurrency 2, no keep-alive, 30 + 30 requests")
	assert.Contains(t, stdout, "State Secrets 2002 (ab -n 1000 -c 12)")
	assert.Contains(t, stdout, "2.27x")

	// Ensure gap -json gives both results and the gap.
	code, stdout, stderr = runCLI("gap", "-json", "-k", "-c", "2", "-t", "0.2", "-warmup", "0.05", url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	var g struct {
		Gap     float64        `json:"gap"`
		Static  map[string]any `json:"static"`
		Dynamic map[string]any `json:"dynamic"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &struct {
		Results any `json:"results"`
	}{&g}))
	assert.Positive(t, g.Gap)
	assert.Equal(t, true, g.Static["keep_alive"])
	assert.Equal(t, "/game?tid=abc", g.Dynamic["document_path"])
}

func TestAbort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	// Ensure an aborted run exits 1 with ab's message and no report.
	code, stdout, stderr := runCLI("-n", "50", "http://"+addr+"/")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "Test aborted after 10 failures")
	assert.Contains(t, stderr, "apr_socket_connect(): Connection refused (111)")
	assert.NotContains(t, stdout, "Server Software")
}

func TestThresholds(t *testing.T) {
	url := MustServe(t)
	// Ensure every threshold that holds exits 0 and prints the table, and
	// one that fails exits 3 after the report, with the failure marked.
	code, stdout, stderr := runCLI("-n", "50", "-c", "2", "-k", "-threshold", "p99<10s", "-threshold", "errors==0",
		"-threshold", "rate>1", "-threshold", "max<=10000", "-threshold", "p99.9<1m", "-threshold", "errors<1%", url+"/")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Percentage of the requests served")
	assert.Regexp(t, `/ +p99<10s +[\d.]+ ms +ok`, stdout)
	assert.Contains(t, stdout, "all 6 thresholds held")

	code, stdout, stderr = runCLI("-n", "50", "-k", "-threshold", "p50<1us", "-threshold", "errors==0", url+"/")
	assert.Equal(t, 3, code, stderr)
	assert.Less(t, strings.Index(stdout, "Percentage of the requests"), strings.Index(stdout, "Thresholds"), "the report comes first")
	assert.Regexp(t, `/ +p50<1us +[\d.]+ ms +FAILED`, stdout)
	assert.Regexp(t, `/ +errors==0 +0 +ok`, stdout)
	assert.Contains(t, stdout, "1 of 2 thresholds FAILED")

	// Ensure with -json the JSON stays alone on stdout and the thresholds go to stderr.
	code, stdout, stderr = runCLI("-json", "-n", "10", "-threshold", "rate>1e9", url+"/")
	assert.Equal(t, 3, code)
	assert.True(t, json.Valid([]byte(stdout)))
	assert.Contains(t, stderr, "FAILED")
}

func TestScenarios(t *testing.T) {
	url := MustServe(t)
	dir := t.TempDir()
	// Ensure hol prints the probe alone and under load with the load's rate.
	code, stdout, stderr := runCLI("hol", "-c", "2", "-k", "-t", "0.3", "-warmup", "0.05", "-rate", "50",
		"-html", filepath.Join(dir, "hol.html"), url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Head-of-line blocking: probe / at 50 req/s")
	// Ensure -title titles the HTML report and names its scenario.
	code, _, stderr = runCLI("hol", "-c", "1", "-k", "-t", "0.2", "-warmup", "0.05", "-rate", "50", "-title", "Login storm",
		"-expect", "403,429", "-html", filepath.Join(dir, "storm.html"), url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	storm, err := os.ReadFile(filepath.Join(dir, "storm.html"))
	require.NoError(t, err)
	assert.Contains(t, string(storm), "<title>Login storm</title>")
	assert.Contains(t, string(storm), "<h2>Login storm: / behind /game?tid=abc</h2>")
	assert.Regexp(t, `probe alone +\d`, stdout)
	assert.Regexp(t, `probe under load +\d`, stdout)
	assert.Regexp(t, `load \(2 clients\) +\d`, stdout)

	// Ensure sweep prints a table per URL, one row per concurrency.
	// With -metrics on a page that is not Prometheus's format, each step
	// says the server loop's figures could not be read.
	code, stdout, stderr = runCLI("sweep", "-k", "-t", "0.15", "-warmup", "0.05", "-c", "1,3", "-metrics", url+"/",
		"-html", filepath.Join(dir, "sweep.html"), url+"/", url+"/game?tid=abc")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 2, strings.Count(stdout, "Sweep: "))
	assert.Regexp(t, `(?m)^ +3 +\d+\.\d\d`, stdout)
	assert.Equal(t, 4, strings.Count(stdout, "metrics not read"), stdout)

	// Ensure -rate and -html work on ab's form, and each -html is a page with charts.
	code, _, stderr = runCLI("-rate", "200", "-t", "0.3", "-c", "2", "-k", "-html", filepath.Join(dir, "run.html"), url+"/")
	require.Equal(t, 0, code, stderr)
	for _, name := range []string{"hol.html", "sweep.html", "run.html"} {
		page, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Contains(t, string(page), "<svg", name)
		assert.Contains(t, string(page), "</html>", name)
	}
}

func TestBindRange(t *testing.T) {
	// Ensure -B spreads the connections over a range of source addresses,
	// one after the other, and -json-out writes the JSON beside the text.
	var mu sync.Mutex
	var hosts []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		hosts = append(hosts, host)
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(s.Close)
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI("-n", "6", "-B", "127.0.0.2-127.0.0.3,127.0.0.7", "-json-out", out, s.URL+"/")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Non-2xx responses:      6")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"127.0.0.2", "127.0.0.3", "127.0.0.7", "127.0.0.2", "127.0.0.3", "127.0.0.7"}, hosts)
	var j struct {
		Complete int           `json:"complete_requests"`
		Statuses map[int]int64 `json:"status_codes"`
	}
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &struct {
		Results any `json:"results"`
	}{&j}))
	assert.Equal(t, 6, j.Complete)
	assert.Equal(t, map[int]int64{403: 6}, j.Statuses)
}

func TestExplain(t *testing.T) {
	// Ensure explain prints sentences computed from the JSON runs of each
	// kind, and exits 1 naming the run when requests were not 2xx.
	url := MustServe(t)
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"gap", "-brief", "-n", "200", "-c", "2", "-json-out", file("gap-new-connection.json")},
		{"gap", "-brief", "-k", "-n", "200", "-c", "2", "-json-out", file("gap-keep-alive.json")},
		{"hol", "-k", "-t", "0.3", "-warmup", "0.1", "-c", "2", "-json-out", file("hol.json")},
	} {
		code, _, stderr := runCLI(append(args, url+"/", url+"/game?tid=x")...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
	}
	code, _, stderr := runCLI("sweep", "-k", "-t", "0.2", "-warmup", "0.1", "-c", "1,2", "-json-out", file("sweep.json"), url+"/")
	require.Equal(t, 0, code, stderr)

	code, stdout, stderr := runCLI("explain", "gap", file("gap-new-connection.json"), file("gap-keep-alive.json"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^keep-alive +HQ +\d+ req/s +- +[\d.]+ ms +1$`, stdout, "no -metrics: no server CPU")
	assert.Contains(t, stdout, "With keep-alive the server's CPU was not read")
	assert.Regexp(t, `Requests per second with keep-alive: the static page \d+ req/s.* against HQ \d+ req/s`, stdout)
	assert.Contains(t, stdout, "The Perl server of 2002 served the static page at 64.61 and HQ at 28.45 req/s (ab -n 1000 -c 12), 2.27x.")
	code, stdout, stderr = runCLI("explain", "hol", file("hol.json"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `The server: 2 connections loaded /game\?tid=x at \d+ req/s\.\n`, stdout)
	// Ensure -machine tells explain the machine's verdict, and a bad one
	// is a usage error naming the flag.
	code, stdout, stderr = runCLI("explain", "-machine", "busy", "hol", file("hol.json"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "As context (the machine was busy")
	code, _, stderr = runCLI("explain", "-machine", "calm", "hol", file("hol.json"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `-machine "calm": want quiet, busy or saturated`)
	code, stdout, stderr = runCLI("explain", "machine", file("hol.json"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^machine: \d+ cores, .*; (quiet|busy|saturated|not judged)`, stdout)
	code, stdout, stderr = runCLI("explain", "sweep", file("sweep.json"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^/: \d+ req/s at -c 1, a peak of \d+ at -c [12]`, stdout)
	assert.Contains(t, stdout, "Little's law (clients = rate x mean latency) held on")
	code, stdout, stderr = runCLI("explain", "engines", "loop="+dir, "other="+dir)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^other +- +- +\d+ req/s +\d+ req/s +1$`, stdout)
	assert.Contains(t, stdout, "HQ's requests per second: other ")
	assert.Contains(t, stdout, ": not distinguishable on this machine", "the same runs")

	// A storm's 403s are its expected answers; in a gap they are errors.
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	t.Cleanup(s.Close)
	form := file("form")
	require.NoError(t, os.WriteFile(form, []byte("name=x&password=y"), 0o600))
	code, _, stderr = runCLI("hol", "-t", "0.3", "-warmup", "0.1", "-c", "2", "-p", form, "-json-out", file("storm.json"), s.URL+"/", s.URL+"/login")
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr = runCLI("explain", "storm", file("storm.json"))
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `The server: 2 clients sent \d+ logins with a wrong password .*: \d+ were checked and refused \(403, expected\), 0 stopped`, stdout)
	code, _, stderr = runCLI("explain", "hol", file("storm.json"))
	assert.Equal(t, 1, code)
	assert.Regexp(t, `requests failed: the server, repeat 1: load: \d+ non-2xx responses \(403: \d+\)`, stderr)

	code, _, _ = runCLI("explain", "gap", file("hol.json"))
	assert.Equal(t, 2, code, "gap wants two files")
	code, _, _ = runCLI("explain", "nonsense", file("hol.json"))
	assert.Equal(t, 2, code)
}

func TestFormatFlags(t *testing.T) {
	// Ensure -hgrm writes HdrHistogram's distribution (one file a page of
	// the gap), -hlog an interval log, -out a JSON line per request, and
	// -json the version 3 envelope with keyed percentiles and every
	// status counted.
	url := MustServe(t)
	dir := t.TempDir()
	hgrm, hlog, out := filepath.Join(dir, "f.hgrm"), filepath.Join(dir, "f.hlog"), filepath.Join(dir, "f.jsonl")
	code, stdout, stderr := runCLI("gap", "-json", "-n", "30", "-c", "2", "-warmup", "0.05", "-hgrm", hgrm, "-hlog", hlog, "-out", out,
		url+"/", url+"/game?tid=x")
	require.Equal(t, 0, code, stderr)
	var env struct {
		SchemaVersion int `json:"schema_version"`
		Results       struct {
			Static struct {
				Percentiles map[string]float64 `json:"percentiles_ms"`
				StatusCodes map[string]int64   `json:"status_codes"`
			} `json:"static"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env))
	assert.Equal(t, 3, env.SchemaVersion)
	assert.Contains(t, env.Results.Static.Percentiles, "p99.9")
	assert.Equal(t, map[string]int64{"200": 30}, env.Results.Static.StatusCodes)
	for _, f := range []string{"f-static.hgrm", "f-dynamic.hgrm"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), " Value\tPercentile\tTotalCount\t1/(1-Percentile)"), f)
		assert.Contains(t, string(b), "Total count    =           30]")
	}
	b, err := os.ReadFile(hlog)
	require.NoError(t, err)
	assert.Contains(t, string(b), "Tag=static,")
	assert.Contains(t, string(b), "Tag=dynamic,")
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	assert.Len(t, lines, 60, "one line a measured request, the warm-up's left out")
	assert.Contains(t, lines[0], `"step":"static"`)
}

func TestOutFlagErrors(t *testing.T) {
	// Ensure an -out file that cannot be created stops the run before it
	// starts, naming the flag.
	code, _, stderr := runCLI("-n", "1", "-out", filepath.Join(t.TempDir(), "no", "such", "f.jsonl"), "http://127.0.0.1:1/")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "loadtest: -out: ")
}

func TestOutputFileFlagErrors(t *testing.T) {
	// Ensure an output file that cannot be created stops the run before it
	// starts (the server is never asked: port 1 would abort the run with
	// another message), naming the flag, and that the check leaves no file.
	for _, flag := range []string{"-json-out", "-html", "-hgrm", "-hlog"} {
		t.Run(flag, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "no", "such", "f")
			code, _, stderr := runCLI("-n", "1", flag, bad, "http://127.0.0.1:1/")
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "loadtest: "+flag+": open "+bad+": ")
			assert.NotContains(t, stderr, "apr_socket_connect", "the run started")
		})
	}
	t.Run("good paths are left as they were", func(t *testing.T) {
		dir := t.TempDir()
		kept := filepath.Join(dir, "kept.html")
		require.NoError(t, os.WriteFile(kept, []byte("old"), 0o644))
		code, _, _ := runCLI("-n", "1", "-html", kept, "-json-out", filepath.Join(dir, "new.json"), "http://127.0.0.1:1/")
		assert.Equal(t, 1, code, "the run fails: nothing listens on port 1")
		b, err := os.ReadFile(kept)
		require.NoError(t, err)
		assert.Equal(t, "old", string(b))
		assert.NoFileExists(t, filepath.Join(dir, "new.json"))
	})
}
