package lesson_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeJSON is a probe's result: 300 requests at 100 a second with these
// p50, p99 and longest (corrected) latencies in ms.
func probeJSON(p50, p99, worst float64) string {
	return fmt.Sprintf(`{"complete_requests": 300, "requests_per_second": 100, "time_taken_s": 3,
		"percentiles_ms": [{"percent": 50, "ms": %g}, {"percent": 99, "ms": %g}],
		"open_loop": {"target_rate": 100, "corrected_ms": {"max": %g}}, "loop": {"utilization": 0.02}}`, p50, p99, worst)
}

// stormJSON is a hol run's JSON whose load is a login storm of 30 logins
// in 3 s answered with statuses, the loop busy utilization of the time,
// its worker pool working workMS and the server using cpuMS of CPU in
// all; the probe's p50 and p99 are 1 and 4 ms alone, 1.5 and u99 ms during
// the storm, and its worst wait worst ms.
func stormJSON(statuses string, utilization, workMS, cpuMS, u99, worst float64) string {
	return fmt.Sprintf(`{"probe_rate": 100, "probe_alone": %s, "probe_under_load": %s,
		"load": {"document_path": "/login", "concurrency_level": 16, "complete_requests": 30, "time_taken_s": 3,
		"requests_per_second": 10, "non_2xx_responses": 30, "non_2xx_by_status": %s,
		"connection_times_ms": {"total": {"mean": 1500}},
		"loop": {"utilization": %g, "lag_p99_ms": 2, "longest_turn_ms": 3, "work_ms": %g, "cpu_ms": %g}}}`,
		probeJSON(1, 4, 6), probeJSON(1.5, u99, worst), statuses, utilization, workMS, cpuMS)
}

// envelope wraps results as a current JSON file of kind.
func envelope(kind, results string) string {
	return fmt.Sprintf(`{"kind": %q, "schema_version": 2, "started_at": "2026-12-01T10:00:00Z", "version": "test",
		"settings": {"urls": ["http://127.0.0.1/"], "concurrency": 1, "timeout_s": 30, "keep_alive": true}, "results": %s}`, kind, results)
}

// explainFiles writes each variant's repeats to files and runs Explain
// with them, one argument per variant ("label=f1,f2").
func explainFiles(t *testing.T, kind string, variants map[string][]string, order ...string) (string, error) {
	t.Helper()
	return explainFilesOn(t, lesson.Quiet, kind, variants, order...)
}

// explainFilesOn is explainFiles on a machine judged machine (ExplainOn).
func explainFilesOn(t *testing.T, machine lesson.Verdict, kind string, variants map[string][]string, order ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for i, label := range order {
		var files []string
		for j, data := range variants[label] {
			path := filepath.Join(dir, fmt.Sprintf("%d-%d.json", i, j))
			require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
			files = append(files, path)
		}
		args = append(args, label+"="+strings.Join(files, ","))
	}
	var b bytes.Buffer
	err := lesson.ExplainOn(&b, machine, kind, args)
	return b.String(), err
}

func TestExplainStorm(t *testing.T) {
	explain := func(json string) (string, error) {
		return explainFiles(t, lesson.ExplainStorm, map[string][]string{"the server": {json}}, "the server")
	}
	// Ensure a file of schema version 1 (no envelope) is read, and the
	// sentences are computed from its figures: 30 logins, 28 checked and
	// 2 limited; 5% of 3 s of loop time over 30 logins is at most 5 ms
	// each, against the pool's 2400 ms / 30 = 80 ms.
	out, err := explain(stormJSON(`{"403": 28, "429": 2}`, 0.05, 2400, 2550, 20, 30))
	require.NoError(t, err)
	assert.Contains(t, out, "The server: 16 clients sent 30 logins with a wrong password a run (10.0 a second), 1500.00 ms mean each: "+
		"28 were checked and refused (403, expected), 2 stopped by the per-address limit (429, expected), over 1 runs.")
	assert.Contains(t, out, "The loop was busy at most 5.00 ms of wall time per login (5% busy), the worker pool worked 80.00 ms of wall time per login: "+
		"the hashing ran there, off the loop; meanwhile the probe waited 30.00 ms at worst (the client's latency), though the loop was free")
	assert.Regexp(t, `the server +4\.00 ms +20\.00 ms +30\.00 ms +- +10\.0 +85\.00 ms +<= 5\.00 ms +80\.00 ms +1\n`, out)

	// A loop busy half the time, 50 ms a login, and no pool: on the loop.
	out, err = explain(stormJSON(`{"403": 30}`, 0.5, 0, 1600, 900, 1500))
	require.NoError(t, err)
	assert.Contains(t, out, "at most 50.00 ms of wall time per login (50% busy), as long as a hash, and the worker pool did not work: the hashing ran on the loop")
	assert.Contains(t, out, "the probe waited 1.50 s at worst")

	// Any other answer to a login fails the storm, after the sentences.
	out, err = explain(stormJSON(`{"403": 20, "503": 10}`, 0.05, 2400, 2500, 20, 30))
	require.ErrorIs(t, err, lesson.ErrFailed)
	assert.Contains(t, err.Error(), "the server, repeat 1: login storm: 10 non-2xx responses (403: 20, 503: 10)")
	assert.Contains(t, out, "16 clients sent 30 logins")
}

func TestExplainStormPair(t *testing.T) {
	// Ensure a before/after storm pair over three repeats sets the
	// probe's worst wait with the hash on the loop beside its worst with
	// the pool (in seconds, then in ms) as a measured difference, and the
	// same CPU per login as not distinguishable: the same hashing, in
	// another place.
	onLoop := []string{
		envelope("hol", stormJSON(`{"403": 30}`, 0.95, 0, 2200, 900, 1200)),
		envelope("hol", stormJSON(`{"403": 30}`, 0.97, 0, 2400, 1000, 1400)),
		envelope("hol", stormJSON(`{"403": 30}`, 0.96, 0, 2300, 950, 1300)),
	}
	pool := []string{
		envelope("hol", stormJSON(`{"403": 30}`, 0.03, 2200, 2250, 5, 6)),
		envelope("hol", stormJSON(`{"403": 30}`, 0.03, 2300, 2350, 6, 7)),
		envelope("hol", stormJSON(`{"403": 30}`, 0.02, 2100, 2150, 7, 9)),
	}
	out, err := explainFiles(t, lesson.ExplainStorm, map[string][]string{"hash on the loop": onLoop, "hash on the pool": pool},
		"hash on the loop", "hash on the pool")
	require.NoError(t, err)
	assert.Contains(t, out, "The probe's worst wait during the storm (the client's latency): hash on the loop 1.30 s [1.20 s-1.40 s] against hash on the pool "+
		"7.00 ms [6.00 ms-9.00 ms], 185.71x, a measured difference (the ranges over 3 and 3 repeats do not overlap).")
	assert.Contains(t, out, "Server CPU time per login: hash on the loop 76.67 ms [73.33 ms-80.00 ms] against hash on the pool 75.00 ms "+
		"[71.67 ms-78.33 ms]: not distinguishable on this machine")
	assert.Contains(t, out, "the hashing ran on the loop, and every other client waited for it")
	assert.Contains(t, out, "the hashing ran there, off the loop")
}

// holJSON is a hol run: the probe alone (p99 a99 ms) and under a load of
// 50 pages a second (p99 u99 ms), the server using cpuMS of CPU over the
// load's 150 pages.
func holJSON(a99, u99, cpuMS float64) string {
	return envelope("hol", fmt.Sprintf(`{"probe_rate": 100, "probe_alone": %s, "probe_under_load": %s,
		"load": {"document_path": "/game?function=dossiers", "concurrency_level": 8, "complete_requests": 150, "time_taken_s": 3,
		"requests_per_second": 50, "loop": {"utilization": 0.4, "cpu_ms": %g}}}`, probeJSON(0.3, a99, a99*1.5), probeJSON(0.5, u99, u99*1.5), cpuMS))
}

func TestExplainHOLPair(t *testing.T) {
	// Ensure the head-of-line pair says, for each server, how the probe's
	// p99 under load compares with its p99 alone (5x without the cache,
	// a measured difference; not distinguishable with it), and sets the
	// pages' CPU side by side.
	out, err := explainFiles(t, lesson.ExplainHOL, map[string][]string{
		"no read cache": {holJSON(3, 19, 1500), holJSON(4, 20, 1470), holJSON(4.8, 26, 1530)},
		"read cache":    {holJSON(3, 3.5, 75), holJSON(4, 4.2, 72), holJSON(4.8, 4.6, 78)},
	}, "no read cache", "read cache")
	require.NoError(t, err)
	assert.Contains(t, out, "No read cache: 8 connections loaded /game?function=dossiers at 50 req/s.\n")
	assert.Contains(t, out, "The probe's p99 on no read cache (the client's latency): under load 20.00 ms [19.00 ms-26.00 ms] against alone 4.00 ms [3.00 ms-4.80 ms], "+
		"5.00x, a measured difference")
	assert.Contains(t, out, "The probe's p99 on read cache (the client's latency): under load 4.20 ms [3.50 ms-4.60 ms] against alone 4.00 ms [3.00 ms-4.80 ms]: "+
		"not distinguishable on this machine")
	assert.Contains(t, out, "Server CPU time per loaded page: no read cache 10.00 ms [9.80 ms-10.20 ms] against read cache 500.0 us "+
		"[480.0 us-520.0 us], 20.00x, a measured difference")
	assert.Regexp(t, `no read cache +0\.30 ms +4\.00 ms \[3\.00 ms-4\.80 ms\] +0\.50 ms +20\.00 ms`, out)
}

func TestExplainReadsKinds(t *testing.T) {
	// Ensure a file of another kind is refused, naming both kinds.
	_, err := explainFiles(t, lesson.ExplainGap, map[string][]string{"a": {holJSON(1, 2, 3)}, "b": {holJSON(1, 2, 3)}}, "a", "b")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "holds a hol run, not gap")
	// Ensure a file of a newer schema is refused.
	_, err = explainFiles(t, lesson.ExplainHOL, map[string][]string{"a": {strings.Replace(holJSON(1, 2, 3), `"schema_version": 2`, `"schema_version": 99`, 1)}}, "a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schema version 99 is newer")
}

// sweepStepJSON is a sweep step at concurrency c: rps requests a second,
// p99 in ms.
func sweepStepJSON(c int, rps, p99 float64) string {
	return fmt.Sprintf(`{"concurrency": %d, "little_holds": true, "result": {"document_path": "/", "concurrency_level": %d,
		"complete_requests": 1000, "requests_per_second": %g, "time_taken_s": 1, "percentiles_ms": [{"percent": 99, "ms": %g}]}}`, c, c, rps, p99)
}

func TestExplainSweepKnee(t *testing.T) {
	// Ensure the sentence gives the knee's rule and the step past it, so
	// that a peak at a higher concurrency than the knee reads as the little
	// throughput that step still gained, not as a contradiction.
	explain := func(knee int, steps ...string) string {
		path := filepath.Join(t.TempDir(), "sweep.json")
		data := envelope("sweep", fmt.Sprintf(`[{"url": "http://127.0.0.1/", "knee_concurrency": %d, "steps": [%s]}]`, knee, strings.Join(steps, ",")))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
		var b bytes.Buffer
		require.NoError(t, lesson.Explain(&b, lesson.ExplainSweep, []string{path}))
		return b.String()
	}
	out := explain(8, sweepStepJSON(1, 5000, 1), sweepStepJSON(8, 13800, 2), sweepStepJSON(64, 14358, 20))
	assert.Contains(t, out, "a peak of 14358 at -c 64")
	assert.Contains(t, out, "the knee (the last level before a step that gains under 10% throughput while p99 grows over 50%) "+
		"is at -c 8: going to -c 64 gained 4% throughput while p99 grew +900%, and the server's loop figures were not read: "+
		"whether more clients queue at the loop is not known")

	out = explain(8, sweepStepJSON(1, 5000, 1), sweepStepJSON(8, 13800, 2), sweepStepJSON(64, 5520, 20))
	assert.Contains(t, out, "going to -c 64 lost 60% throughput while p99 grew +900%", "a loss reads as one")

	out = explain(0, sweepStepJSON(1, 5000, 1), sweepStepJSON(8, 13800, 2))
	assert.Contains(t, out, "no knee (no step gained under 10% throughput while p99 grew over 50%) from -c 1 to 8")
}
