package loadtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustSchema compiles schema.json, the documented JSON form.
func mustSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile("schema.json")
	require.NoError(tb, err)
	return s
}

// kindCase is one kind of Output on real results, and what its files
// hold.
type kindCase struct {
	kind  string
	out   Output
	hgrms []string // the .hgrm files -hgrm f.hgrm writes, by suffix ("" for f.hgrm itself)
	html  string   // a heading its HTML section has
}

// everyKind is every kind of Output, on the fixtures.
func everyKind(t *testing.T) []kindCase {
	gap := fixtureGap(t, "gap-keep-alive.json")
	gap.Reference = &seed2002
	return []kindCase{
		{"run", gap.Dynamic, []string{""}, "<h2>/game?function=hq"},
		{"run", fixtureHOL(t, "hol.json").UnderLoad, []string{""}, "<h2>/</h2>"},
		{"gap", gap, []string{"-static", "-dynamic"}, "<h2>static /</h2>"},
		{"hol", fixtureHOL(t, "storm.json"), []string{"-probe-alone", "-probe-under-load", "-load"}, "<h2>Head-of-line blocking: / behind /login</h2>"},
		{"sweep", fixtureSweeps(t, "sweep.json"), []string{"-1-c1", "-1-c8", "-1-c64", "-2-c1", "-2-c8", "-2-c64"}, "<h2>Concurrency sweep: /</h2>"},
		{"users", fixtureUsers(t, "users.json"), []string{"-events", "-order", "-page", "-delivery"}, "<h2>Virtual users</h2>"},
	}
}

func TestPrintEveryKind(t *testing.T) {
	// Ensure Print prints every kind through the one seam: its JSON valid
	// against schema.json (version 3, keyed percentiles, every status
	// counted), its text, the same JSON in -json-out, its HTML section
	// and its .hgrm files.
	schema := mustSchema(t)
	for _, kc := range everyKind(t) {
		t.Run(kc.kind, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			o := PrintOptions{Stdout: &stdout, Stderr: &stderr, JSON: true, Version: "v1.2.3 (test)",
				StartedAt: time.Date(2026, 12, 7, 5, 21, 0, 0, time.UTC), Settings: Settings{URLs: []string{"http://127.0.0.1:1/"}, Concurrency: 1, Timeout: 30},
				JSONOut: filepath.Join(dir, "r.json"), HTML: filepath.Join(dir, "r.html"), HGRM: filepath.Join(dir, "r.hgrm"), Title: "test"}
			require.Equal(t, 0, Print(kc.out, o), stderr.String())
			var doc any
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &doc))
			require.NoError(t, schema.Validate(doc), stdout.String())
			env, err := ReadEnvelope(stdout.Bytes())
			require.NoError(t, err)
			assert.Equal(t, kc.kind, env.Kind)
			assert.Equal(t, 3, env.SchemaVersion)
			assert.Equal(t, "v1.2.3 (test)", env.Version)
			assert.Contains(t, string(env.Results), `"p99":`, "percentiles keyed")
			assert.Contains(t, string(env.Results), `"status_codes": {`)
			file, err := os.ReadFile(o.JSONOut)
			require.NoError(t, err)
			assert.Equal(t, stdout.String(), string(file), "-json-out holds what -json prints")
			page, err := os.ReadFile(o.HTML)
			require.NoError(t, err)
			assert.Contains(t, string(page), kc.html)
			assert.True(t, strings.HasSuffix(string(page), "</html>\n"))
			for _, suffix := range kc.hgrms {
				_, err := os.Stat(filepath.Join(dir, "r"+suffix+".hgrm"))
				assert.NoError(t, err, "the %q series' .hgrm", suffix)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "*.hgrm"))
			assert.Len(t, names, len(kc.hgrms), "one .hgrm a series: %v", names)
			assert.NotEmpty(t, Text(t, kc.out))
		})
	}
}

func TestPrintText(t *testing.T) {
	// Ensure the text goes to stdout with the thresholds' table after it,
	// and nothing to stderr.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	var stdout, stderr bytes.Buffer
	code := Print(res, PrintOptions{Stdout: &stdout, Stderr: &stderr, Thresholds: mustThresholds(t, "errors==0", "rate>1")})
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr.String())
	text, table, ok := strings.Cut(stdout.String(), "\nThresholds\n")
	require.True(t, ok, stdout.String())
	assert.Contains(t, text, "Requests per second:    16144.40 [#/sec] (mean)")
	assert.Regexp(t, `(?m)^/ +errors==0 +0 +ok$`, table)
	assert.Regexp(t, `(?m)^/ +rate>1 +16144\.40 req/s +ok$`, table)
	assert.Contains(t, table, "all 2 thresholds held")
}

// mustThresholds parses exprs.
func mustThresholds(tb testing.TB, exprs ...string) []Threshold {
	tb.Helper()
	var out []Threshold
	for _, e := range exprs {
		th, err := ParseThreshold(e)
		require.NoError(tb, err, e)
		out = append(out, th)
	}
	return out
}

func TestPrintThresholds(t *testing.T) {
	// Ensure a failed threshold gives exit status 3 after the whole
	// report, that with -json its table goes to stderr and stdout holds
	// the JSON alone, and that each kind checks the runs it should.
	hol := fixtureHOL(t, "hol.json")
	var stdout, stderr bytes.Buffer
	code := Print(hol, PrintOptions{Stdout: &stdout, Stderr: &stderr, JSON: true, Thresholds: mustThresholds(t, "p99<1ms", "errors==0")})
	assert.Equal(t, 3, code)
	assert.True(t, json.Valid(stdout.Bytes()), "stdout is the JSON alone")
	assert.Regexp(t, `(?m)^probe under load +p99<1ms +2546\.09 ms +FAILED$`, stderr.String())
	assert.Regexp(t, `(?m)^probe under load +errors==0 +0 +ok$`, stderr.String())
	assert.Contains(t, stderr.String(), "1 of 2 thresholds FAILED")

	for _, tc := range []struct {
		out  Output
		runs []string
	}{
		{hol.Alone, []string{"/"}},
		{fixtureGap(t, "gap-keep-alive.json"), []string{"static /", "dynamic /game?function=hq&tid=a1384c5..."}},
		{hol, []string{"probe under load"}},
		{Sweeps{fixtureSweeps(t, "sweep.json")[0]}, []string{"/ -c 1", "/ -c 8", "/ -c 64"}},
		{fixtureUsers(t, "users.json"), []string{"events", "order", "page"}},
	} {
		var runs []string
		for _, c := range tc.out.check(mustThresholds(t, "max>=0")) {
			runs = append(runs, c.Run)
			assert.True(t, c.OK, c.Run)
		}
		assert.Equal(t, tc.runs, runs, "%s checks these runs", tc.out.kind())
	}
}

func TestPrintStepThresholdOnRuns(t *testing.T) {
	// Ensure a threshold naming a step fails on a result of ab's form,
	// which has no steps, rather than holding unchecked.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	var stdout bytes.Buffer
	assert.Equal(t, 3, Print(res, PrintOptions{Stdout: &stdout, Stderr: &stdout, Thresholds: mustThresholds(t, "page.p99<1s")}))
	assert.Regexp(t, `(?m)^page +page\.p99<1s +no step page +FAILED$`, stdout.String())
}

func TestPrintUsersStepThresholds(t *testing.T) {
	// Ensure a virtual-user run checks a step's threshold on that step,
	// and one without a step on every step but delivery.
	users := fixtureUsers(t, "users.json")
	checks := users.check(mustThresholds(t, "page.p99<=50ms", "errors==0", "delivery.p99<1s"))
	got := map[string]bool{}
	for _, c := range checks {
		got[c.Run+" "+c.Threshold.Expr] = c.OK
	}
	assert.Equal(t, map[string]bool{"page page.p99<=50ms": false, "events errors==0": true, "order errors==0": true,
		"page errors==0": true, "delivery delivery.p99<1s": true}, got)
}

func TestPrintErrors(t *testing.T) {
	// Ensure a file that cannot be written gives exit status 1 and a line
	// on stderr naming the program and the file, after the report.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, o := range []PrintOptions{
		{JSONOut: filepath.Join(missing, "r.json")},
		{HTML: filepath.Join(missing, "r.html")},
		{HGRM: filepath.Join(missing, "r.hgrm")},
		{HLog: filepath.Join(missing, "r.hlog")},
		{Summary: func(w io.Writer) error { return errors.New("summary failed") }},
	} {
		var stdout, stderr bytes.Buffer
		o.Program, o.Stdout, o.Stderr = "players", &stdout, &stderr
		assert.Equal(t, 1, Print(res, o))
		assert.True(t, strings.HasPrefix(stderr.String(), "players: "), stderr.String())
		assert.Contains(t, stdout.String(), "Server Software:", "the report came first")
	}
}

func TestPrintSummaryLast(t *testing.T) {
	// Ensure the summary is the last line on stdout, after the text and
	// the thresholds, and after the JSON with -json (scripts/capacity.sh
	// reads the last line).
	users := fixtureUsers(t, "users.json")
	summary := func(w io.Writer) error { _, err := io.WriteString(w, "capacity: 799 players\n"); return err }
	for _, o := range []PrintOptions{{}, {JSON: true}, {Quiet: true}, {Thresholds: mustThresholds(t, "errors==0")}} {
		var stdout, stderr bytes.Buffer
		o.Stdout, o.Stderr, o.Summary = &stdout, &stderr, summary
		Print(users, o)
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		assert.Equal(t, "capacity: 799 players", lines[len(lines)-1])
		if o.Quiet {
			assert.Len(t, lines, 1, "-q prints the summary alone")
		}
	}
}

func TestPrintDefaults(t *testing.T) {
	// Ensure the zero options print on the process's streams under the
	// name loadtest, with the command line as the HTML's command.
	var o PrintOptions
	o.defaults()
	assert.Equal(t, "loadtest", o.Program)
	assert.Equal(t, os.Stdout, o.Stdout)
	assert.Equal(t, os.Stderr, o.Stderr)
	assert.Equal(t, strings.Join(os.Args, " "), o.Command)
}

func TestAddFlags(t *testing.T) {
	// Ensure AddFlags declares the shared flags, -threshold repeatable,
	// and names the flag of a bad threshold.
	var o PrintOptions
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"-json", "-json-out", "a.json", "-html", "a.html", "-hgrm", "a.hgrm", "-hlog", "a.hlog",
		"-threshold", "p99<20ms", "-threshold", "page.errors==0"}))
	assert.True(t, o.JSON)
	assert.Equal(t, []string{"a.json", "a.html", "a.hgrm", "a.hlog"}, []string{o.JSONOut, o.HTML, o.HGRM, o.HLog})
	require.Len(t, o.Thresholds, 2)
	assert.Equal(t, "page", o.Thresholds[1].Step)
	err := fs.Parse([]string{"-threshold", "p42<1ms"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-threshold: "p42<1ms": unknown metric "p42"`)
}

// hgrmRow is one row of a .hgrm file.
type hgrmRow struct {
	value, quantile float64
	count           int64
}

// readHGRM parses a .hgrm file as HdrHistogram's tools do: its rows, and
// its footer's total count and max.
func readHGRM(tb testing.TB, path string) (rows []hgrmRow, total int64, maxMS float64) {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "#[Max"):
			_, err := fmt.Sscanf(strings.ReplaceAll(line, " ", ""), "#[Max=%f,Totalcount=%d]", &maxMS, &total)
			require.NoError(tb, err, line)
		case len(fields) == 4 && !strings.HasPrefix(line, "#") && fields[0] != "Value":
			v, err1 := strconv.ParseFloat(fields[0], 64)
			q, err2 := strconv.ParseFloat(fields[1], 64)
			n, err3 := strconv.ParseInt(fields[2], 10, 64)
			require.NoError(tb, errors.Join(err1, err2, err3), line)
			rows = append(rows, hgrmRow{v, q, n})
		}
	}
	require.NoError(tb, sc.Err())
	return rows, total, maxMS
}

func TestHGRMParsesBack(t *testing.T) {
	// Ensure the .hgrm of a run holds the JSON's distribution: the same
	// percentiles, the same latencies within the histogram's 0.1% (the
	// JSON's are kept within the exact min and max), counts rising to
	// the run's requests, and a footer with its total.
	url := cannedServer(t, 2752)
	res, err := Run(t.Context(), Config{URL: url, Requests: 400, Concurrency: 4, KeepAlive: true})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "run.hgrm")
	var js bytes.Buffer
	require.Equal(t, 0, Print(res, PrintOptions{HGRM: path, JSON: true, Stdout: &js, Stderr: io.Discard}))
	var env struct {
		Results struct {
			Distribution []struct {
				Percent float64 `json:"percent"`
				MS      float64 `json:"ms"`
			} `json:"distribution_ms"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &env))
	rows, total, maxMS := readHGRM(t, path)
	dist := env.Results.Distribution
	require.Len(t, rows, len(dist))
	assert.EqualValues(t, res.CompleteRequests, total)
	assert.InDelta(t, ms(res.Total.Max), maxMS, ms(res.Total.Max)/1000+0.001)
	for i, d := range dist {
		assert.InDelta(t, d.Percent/100, rows[i].quantile, 1e-6, "row %d", i)
		assert.InDelta(t, d.MS, rows[i].value, d.MS/1000+0.002, "row %d at %v%%", i, d.Percent)
		if i > 0 {
			assert.GreaterOrEqual(t, rows[i].count, rows[i-1].count)
		}
	}
	assert.EqualValues(t, res.CompleteRequests, rows[len(rows)-1].count)
}

// failWriter fails every write, as a closed pipe would.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestPrintStdoutFails(t *testing.T) {
	// Ensure a report that cannot be written to stdout gives exit status
	// 1 and says why on stderr, in text and in JSON.
	res := fixtureGap(t, "gap-keep-alive.json").Static
	for _, o := range []PrintOptions{{}, {JSON: true}} {
		var stderr bytes.Buffer
		o.Stdout, o.Stderr = failWriter{}, &stderr
		assert.Equal(t, 1, Print(res, o))
		assert.Contains(t, stderr.String(), "loadtest: ")
		assert.Contains(t, stderr.String(), "broken pipe")
	}
}

func TestPrintBriefOnlyWhereAKindHasIt(t *testing.T) {
	// Ensure Brief shortens the gap's text to its table and the loop's
	// figures, and leaves the kinds without a short form as they are.
	gap := fixtureGap(t, "gap-keep-alive.json")
	gap.Reference = &seed2002
	brief := string(printed(t, gap, PrintOptions{Brief: true}))
	full := string(printed(t, gap, PrintOptions{}))
	assert.NotContains(t, brief, "Server Software:")
	assert.Contains(t, brief, "Gap: static vs dynamic")
	assert.Contains(t, full, "Server Software:")
	assert.Contains(t, full, brief[:strings.Index(brief, "Server loop")], "the brief table is the full text's too")
	hol := fixtureHOL(t, "hol.json")
	assert.Equal(t, printed(t, hol, PrintOptions{}), printed(t, hol, PrintOptions{Brief: true}))
}

func TestCheckFiles(t *testing.T) {
	// Ensure the files Print will write are checked before a run: a new
	// one is created and removed again, one that exists is left as it
	// was (not truncated), and one that cannot be opened is an error
	// naming its flag; no file named, nothing to check.
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(old, []byte("kept"), 0o644))
	require.NoError(t, PrintOptions{JSONOut: old, HTML: filepath.Join(dir, "new.html"), HGRM: filepath.Join(dir, "new.hgrm"),
		HLog: filepath.Join(dir, "new.hlog")}.CheckFiles())
	b, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(b), "an existing file is not truncated")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the files it created are removed: %v", entries)
	assert.Equal(t, "old.json", entries[0].Name())

	missing := filepath.Join(dir, "no", "such", "folder", "f")
	for flag, o := range map[string]PrintOptions{"-json-out": {JSONOut: missing}, "-html": {HTML: missing},
		"-hgrm": {HGRM: missing}, "-hlog": {HLog: missing, HTML: filepath.Join(dir, "fine.html")}} {
		err := o.CheckFiles()
		require.Error(t, err, flag)
		assert.True(t, strings.HasPrefix(err.Error(), flag+": open "), err.Error())
		assert.ErrorIs(t, err, fs.ErrNotExist, flag)
	}
	err = PrintOptions{HTML: dir}.CheckFiles()
	require.Error(t, err, "a folder is no file")
	assert.DirExists(t, dir)
	assert.FileExists(t, old)
	assert.NoError(t, PrintOptions{}.CheckFiles())
}
