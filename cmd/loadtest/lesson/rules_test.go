package lesson_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
)

// The sentence rules of make loadtest's explain steps (issue 28, item 4),
// each on figures made to break it.

// waitProbeJSON is a probe's result: n responses of due ones (the rest
// never sent), p99 in ms.
func waitProbeJSON(n, due int, p99 float64) string {
	return fmt.Sprintf(`{"complete_requests": %d, "requests_per_second": 100, "time_taken_s": 3,
		"percentiles_ms": [{"percent": 50, "ms": 0.3}, {"percent": 99, "ms": %g}],
		"open_loop": {"target_rate": 100, "corrected_ms": {"max": %g}, "unsent_requests": %d}}`, n, p99, p99*1.5, due-n)
}

// attributedHOL is a hol run whose load's metrics carry the loop's
// attribution of the probe's route: its p99 wait behind other work hol
// ms and for a CPU cpu ms, over n requests; the probe under load got
// got of 300 responses with p99 u99 ms.
func attributedHOL(hol, cpu float64, n, got int, u99, cpuMS float64) string {
	return envelope("hol", fmt.Sprintf(`{"probe_rate": 100, "probe_alone": %s, "probe_under_load": %s,
		"load": {"document_path": "/game?function=dossiers", "concurrency_level": 8, "complete_requests": 150, "time_taken_s": 3,
		"requests_per_second": 50, "loop": {"utilization": 0.9, "cpu_ms": %g, "loop_wait": {"loop_cpu_ms": 2700, "loop_cpu_wait_ms": 300,
		"cpu_wait_share": 0.1, "routes": [{"route": "GET /{$}", "requests": %d, "head_of_line_ms": {"mean": %g, "p50": 1, "p99": %g, "max_bound": %g},
		"cpu_wait_ms": {"mean": 0.1, "p50": 0.1, "p99": %g, "max_bound": 1}, "handler_ms": {"mean": 0.05, "p50": 0.05, "p99": 0.1, "max_bound": 0.1}}]}}}}`,
		waitProbeJSON(300, 300, 4), waitProbeJSON(got, 300, u99), cpuMS, n, hol/2, hol, hol*2, cpu))
}

func explainOn(t *testing.T, machine lesson.Verdict, kind string, variants map[string][]string, order ...string) string {
	t.Helper()
	out, err := explainFilesOn(t, machine, kind, variants, order...)
	require.NoError(t, err)
	return out
}

func holPairOn(t *testing.T, machine lesson.Verdict) string {
	return explainOn(t, machine, lesson.ExplainHOL, map[string][]string{
		"no read cache": {attributedHOL(60, 0.5, 290, 300, 900, 1500), attributedHOL(70, 0.4, 300, 300, 1100, 1470), attributedHOL(65, 0.6, 295, 300, 1000, 1530)},
		"read cache":    {attributedHOL(1, 0.5, 290, 300, 800, 75), attributedHOL(1.2, 0.6, 300, 300, 1200, 72), attributedHOL(0.9, 0.4, 295, 300, 1000, 78)},
	}, "no read cache", "read cache")
}

func TestRuleAttributionFewRequests(t *testing.T) {
	// Ensure that when a repeat's loop attributed fewer than 100 of the
	// probe's requests (a loop starved of a CPU answers a few), the pair
	// is compared by the mean wait behind other pages, exact and said to
	// be a mean, never by a p99 of too few.
	out := explainOn(t, lesson.Busy, lesson.ExplainHOL, map[string][]string{
		"no read cache": {attributedHOL(60, 0.5, 8, 8, 900, 1500), attributedHOL(70, 0.4, 5, 5, 1100, 1470), attributedHOL(40, 0.6, 11, 11, 1000, 1530)},
		"read cache":    {attributedHOL(1, 0.5, 290, 300, 800, 75), attributedHOL(1.2, 0.6, 300, 300, 1200, 72), attributedHOL(0.9, 0.4, 295, 300, 1000, 78)},
	}, "no read cache", "read cache")
	assert.Contains(t, out, "The probe's mean wait behind other pages on the loop (the loop's attribution; a mean, exact, since a repeat "+
		"attributed as few as 5 requests and a p99 needs 100): no read cache 30.00 ms [20.00 ms-35.00 ms] against read cache 0.50 ms [0.45 ms-0.60 ms], 60.00x")
	assert.Contains(t, out, "the p99 n/a (5 requests attributed)) and for a CPU p99 n/a; on average 30.00 ms [20.00 ms-35.00 ms] behind other pages")
	assert.NotContains(t, out, "p99 wait behind other pages on the loop (the loop's attribution)")
}

func TestRuleAttribution(t *testing.T) {
	// Ensure the lesson reads the loop's attribution beside the client's
	// latency, and compares the pair by it.
	out := holPairOn(t, lesson.Quiet)
	assert.Contains(t, out, "By the loop's own account the probe waited p99 65.00 ms [60.00 ms-70.00 ms] behind other pages on the loop (the lesson) "+
		"and 0.50 ms [0.40 ms-0.60 ms] for a CPU (this machine), over at least 290 requests it attributed.")
	assert.Contains(t, out, "The probe's p99 wait behind other pages on the loop (the loop's attribution): no read cache 65.00 ms [60.00 ms-70.00 ms] "+
		"against read cache 1.00 ms [0.90 ms-1.20 ms], 65.00x, a measured difference")
	assert.Regexp(t, `no read cache .* 65\.00 ms \[60\.00 ms-70\.00 ms\] +0\.50 ms \[0\.40 ms-0\.60 ms\] +10\.00 ms`, out, "the table has it")
	// The client's latencies overlap here (a busy machine's doing): said so.
	assert.Contains(t, out, "The probe's p99 under load (the client's latency): no read cache 1000.00 ms [900.00 ms-1100.00 ms] against read cache "+
		"1000.00 ms [800.00 ms-1200.00 ms]: not distinguishable on this machine")
}

func TestRuleBusyMachine(t *testing.T) {
	// Ensure on a busy machine the lesson leads with the loop's
	// attribution and CPU per page, and gives the client's latencies
	// after them, as context.
	out := holPairOn(t, lesson.Busy)
	attr := strings.Index(out, "The probe's p99 wait behind other pages on the loop (the loop's attribution)")
	cpu := strings.Index(out, "Server CPU time per loaded page:")
	client := strings.Index(out, "As context (the machine was busy: the client's latencies carry its wait for a CPU): The probe's p99 under load")
	require.True(t, attr > 0 && cpu > 0 && client > 0, out)
	assert.Less(t, attr, client)
	assert.Less(t, cpu, client)
	assert.Contains(t, holPairOn(t, lesson.Quiet), "\nThe probe's p99 under load (the client's latency)", "no context prefix when quiet")
}

func TestRuleFewResponses(t *testing.T) {
	// Ensure no p99 is printed from under 100 responses, and that a probe
	// that got fewer answers than it asked for says so first.
	out := explainOn(t, lesson.Quiet, lesson.ExplainHOL, map[string][]string{
		"the server": {attributedHOL(60, 0.5, 40, 40, 900, 1500)},
	}, "the server")
	assert.Contains(t, out, "n/a (40 responses)")
	assert.NotContains(t, out, "900.00 ms", "the p99 of 40 responses is nowhere")
	assert.Contains(t, out, "The probe's p99 on the server: alone 4.00 ms, under load n/a (40 responses): no percentile from fewer than 100 responses.")
	assert.Contains(t, out, "the probe waited at most 120.00 ms behind other pages on the loop (the lesson; a bucket's bound, the p99 n/a (40 requests attributed))")
	lines := strings.Split(out, "\n")
	var first int
	for i, l := range lines {
		if strings.HasPrefix(l, "(each figure") {
			first = i + 1
		}
	}
	assert.Equal(t, "The server: the probe asked for 300 requests under load and got 40 answered.", lines[first], "said first")
}

// ratio is a printed ratio, "5.00x".
var ratio = regexp.MustCompile(`\d+\.\d\dx`)

func TestRuleOneRatio(t *testing.T) {
	// Ensure no sentence carries two ratios: each comparison is made once.
	out := holPairOn(t, lesson.Quiet)
	for _, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len(ratio.FindAllString(l, -1)), 1, l)
	}
	assert.Equal(t, 1, strings.Count(out, "no read cache 65.00 ms [60.00 ms-70.00 ms] against read cache"), "one comparison once")
}

// gapFixture is a gap run: the static page and HQ at these req/s, with CPU.
func gapFixture(static, dynamic float64) string {
	r := func(path string, rps float64) string {
		return fmt.Sprintf(`{"document_path": %q, "complete_requests": 1000, "requests_per_second": %g, "time_taken_s": 1,
			"percentiles_ms": [{"percent": 99, "ms": 2}], "loop": {"utilization": 0.5, "cpu_ms": 50}}`, path, rps)
	}
	return envelope("gap", fmt.Sprintf(`{"static": %s, "dynamic": %s, "gap": %g}`, r("/", static), r("/game?function=hq", dynamic), static/dynamic))
}

func TestRuleOverlapRequestsPerSecond(t *testing.T) {
	// Ensure requests per second obey the overlap rule, and a ratio below
	// 1 (HQ served faster than the static page) gets its own words.
	out := explainOn(t, lesson.Quiet, lesson.ExplainGap, map[string][]string{
		"a new connection each": {gapFixture(1000, 900), gapFixture(1200, 1300), gapFixture(800, 700)},
		"keep-alive":            {gapFixture(1000, 1500), gapFixture(1100, 1600), gapFixture(900, 1400)},
	}, "a new connection each", "keep-alive")
	assert.Contains(t, out, "Requests per second with a new connection each: the static page 1000 req/s [800 req/s-1200 req/s] against HQ 900 req/s "+
		"[700 req/s-1300 req/s]: not distinguishable on this machine")
	assert.Contains(t, out, "Requests per second with keep-alive: the static page 1000 req/s [900 req/s-1100 req/s] against HQ 1500 req/s "+
		"[1400 req/s-1600 req/s], 0.67x: a ratio below 1, the static page was the lower here, a measured difference")
	assert.NotContains(t, out, "By requests per second the gap was")
}

func TestRuleSweepQueue(t *testing.T) {
	// Ensure the sweep says "queue" only when the loop was busy past the
	// knee, and otherwise names the machine's cores.
	sweep := func(util float64) string {
		step := func(c int, rps, p99, u float64) string {
			return fmt.Sprintf(`{"concurrency": %d, "little_holds": true, "result": {"document_path": "/", "concurrency_level": %d,
				"complete_requests": 1000, "requests_per_second": %g, "time_taken_s": 1, "percentiles_ms": [{"percent": 99, "ms": %g}],
				"loop": {"utilization": %g, "lag_p99_ms": 1, "longest_turn_ms": 1}}}`, c, c, rps, p99, u)
		}
		path := filepath.Join(t.TempDir(), "sweep.json")
		data := envelope("sweep", fmt.Sprintf(`[{"url": "http://127.0.0.1/", "knee_concurrency": 8, "steps": [%s, %s, %s]}]`,
			step(1, 5000, 1, 0.3), step(8, 13800, 2, 0.6), step(64, 5800, 40, util)))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
		var b bytes.Buffer
		require.NoError(t, lesson.Explain(&b, lesson.ExplainSweep, []string{path}))
		return b.String()
	}
	assert.Contains(t, sweep(0.79), "though the loop was only 79% busy: not a queue at the loop, but more clients competing with the server for this machine's")
	assert.NotContains(t, sweep(0.79), "mostly queue")
	assert.Contains(t, sweep(0.95), "and the loop was 95% busy, so past it more clients mostly queue at the loop")
}

func TestSweepAttribution(t *testing.T) {
	// Ensure the sweep's last step reads the loop's attribution of its
	// requests' waits.
	path := filepath.Join(t.TempDir(), "sweep.json")
	data := envelope("sweep", `[{"url": "http://127.0.0.1/", "knee_concurrency": 0, "steps": [{"concurrency": 64, "little_holds": true,
		"result": {"document_path": "/", "concurrency_level": 64, "complete_requests": 1000, "requests_per_second": 1000, "time_taken_s": 1,
		"percentiles_ms": [{"percent": 99, "ms": 40}], "loop": {"utilization": 0.9, "lag_p99_ms": 1, "longest_turn_ms": 1,
		"loop_wait": {"loop_cpu_ms": 900, "loop_cpu_wait_ms": 10, "cpu_wait_share": 0.01, "routes": [
		{"route": "GET /{$}", "requests": 900, "head_of_line_ms": {"mean": 5, "p50": 4, "p99": 30, "max_bound": 50},
		"cpu_wait_ms": {"mean": 0, "p50": 0, "p99": 0.2, "max_bound": 1}, "handler_ms": {"mean": 0.05, "p50": 0.05, "p99": 0.1, "max_bound": 0.1}}]}}}}]}]`)
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	var b bytes.Buffer
	require.NoError(t, lesson.Explain(&b, lesson.ExplainSweep, []string{path}))
	assert.Contains(t, b.String(), "; by the loop's own account its requests (GET /{$}) waited p99 30.00 ms behind other work on the loop and 0.20 ms for a CPU (900 attributed).")
}

func TestRuleWallAndCPULabelled(t *testing.T) {
	// Ensure wall time and CPU time never stand side by side unlabelled.
	out, err := explainFiles(t, lesson.ExplainStorm, map[string][]string{"the server": {stormJSON(`{"403": 30}`, 0.05, 2400, 2550, 20, 30)}}, "the server")
	require.NoError(t, err)
	assert.Contains(t, out, "the worker pool worked 80.00 ms of wall time per login")
	assert.Contains(t, out, "server CPU per login is CPU time, loop time and worker pool per login wall time")
}

func TestExplainMachine(t *testing.T) {
	// Ensure explain machine judges from the probes' figures and prints
	// one machine line.
	dir := t.TempDir()
	quiet, busy := filepath.Join(dir, "quiet.json"), filepath.Join(dir, "busy.json")
	run := func(p99, late, waitMs float64) string {
		return envelope("run", fmt.Sprintf(`{"complete_requests": 400, "time_taken_s": 2, "percentiles_ms": [{"percent": 99, "ms": %g}],
			"open_loop": {"target_rate": 200, "unsent_requests": 0, "client_lateness_p99_ms": %g},
			"loop": {"utilization": 0.01, "loop_wait": {"loop_cpu_ms": 10, "loop_cpu_wait_ms": %g, "routes": []}}}`, p99, late, waitMs))
	}
	require.NoError(t, os.WriteFile(quiet, []byte(run(0.5, 0.1, 20)), 0o600))
	require.NoError(t, os.WriteFile(busy, []byte(run(30, 4, 800)), 0o600))
	var b bytes.Buffer
	require.NoError(t, lesson.Explain(&b, lesson.ExplainMachine, []string{quiet}))
	assert.Regexp(t, `^machine: \d+ cores, .*load average .*; quiet: every figure holds \(the probe alone 400 of 400 due requests answered, its p99 0\.50 ms, `+
		`the loop waited for a CPU 1\.0% of the run's 2\.0 s, the load generator's own lateness p99 0\.10 ms\)\n$`, b.String())
	b.Reset()
	require.NoError(t, lesson.Explain(&b, lesson.ExplainMachine, []string{busy, busy, quiet}))
	assert.Contains(t, b.String(), "; busy: ")
	assert.Contains(t, b.String(), "(medians over 3 probes)")
	b.Reset()
	hol := filepath.Join(dir, "hol.json")
	require.NoError(t, os.WriteFile(hol, []byte(attributedHOL(1, 1, 300, 300, 5, 10)), 0o600))
	require.NoError(t, lesson.Explain(&b, lesson.ExplainMachine, []string{hol}), "a hol run's probe alone is a probe")
	assert.Contains(t, b.String(), "its p99 4.00 ms")
}

func TestExplainMachineRecorded(t *testing.T) {
	// Ensure the machine line judges real probes as what they were:
	// make loadtest's first and last probes on the quiet 2-core machine
	// (a load average of 0.45; the first probe's loop, beside five servers
	// still starting on its core, waited for a CPU 54% of the time it
	// wanted to run, 7.5% of the run), and the same probe beside sixteen
	// busy loops (testdata/machine).
	for _, c := range []struct {
		file, verdict string
	}{
		{"quiet-start.json", "; quiet: "},
		{"quiet-end.json", "; quiet: "},
		{"busy-probe-2.json", "; busy: "},
		{"busy-probe-3.json", "; busy: "},
		// make loadtest's first probe on 2026-12-07 at 15:09 (a load
		// average of 0.95) and beside sixteen busy loops at 15:00.
		{"quiet-loadtest-start.json", "; quiet: "},
		{"busy-loadtest-start.json", "; busy: "},
	} {
		var b bytes.Buffer
		require.NoError(t, lesson.Explain(&b, lesson.ExplainMachine, []string{filepath.Join("testdata", "machine", c.file)}))
		assert.Contains(t, b.String(), c.verdict, c.file)
	}
}
