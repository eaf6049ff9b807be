package loadtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
)

// The explain kinds and the files each takes (see Explain).
const (
	ExplainGap     = "gap"     // NEW_CONNECTION.json KEEP_ALIVE.json: two gap runs
	ExplainHOL     = "hol"     // HOL.json: a hol run
	ExplainSweep   = "sweep"   // SWEEP.json: a sweep run
	ExplainStorm   = "storm"   // HOL.json: a hol run whose load is a login storm
	ExplainEngines = "engines" // LABEL=DIR...: each DIR holds EngineFiles
)

// EngineFiles are the runs Explain's engines kind reads from each folder:
// the gap without and with keep-alive and the head-of-line scenario, as
// -json-out writes them.
var EngineFiles = [3]string{"gap-new-connection.json", "gap-keep-alive.json", "hol.json"}

// StormStatuses are the answers a login storm's load may get without
// failing: 403 Forbidden (a wrong password, checked with its hash) and 429
// Too Many Requests (the per-address limit, nothing checked).
var StormStatuses = map[int]bool{403: true, 429: true}

// StormLoopBound is the loop time per login (the loop's busy time over
// the logins) from which Explain's storm kind says the hashing seems to
// run on the loop, when the server does not say how long its worker pool
// worked: a bcrypt hash at the default cost takes tens of ms.
const StormLoopBound = 10.0 // ms

// ErrFailed is returned by Explain when a run in its files had failed
// requests or responses it should not have (non-2xx, outside a storm's
// StormStatuses).
var ErrFailed = errors.New("loadtest: requests failed")

// ErrUsage is returned by Explain for an unknown kind or the wrong number of
// files.
var ErrUsage = errors.New("loadtest: explain: bad arguments")

// Explain writes two or three plain sentences on what the results in
// files show, computed from their figures (rates, percentiles, the server
// loop's figures): files are what -json-out (or -json) wrote, and kind says
// which runs they are (ExplainGap and the others). It is the commentary
// of make loadtest, run after each section. After writing, it returns an
// error wrapping ErrFailed that names every run with failed requests or
// unexpected responses; other errors are for files that cannot be read.
func Explain(w io.Writer, kind string, files []string) error {
	var e explainer
	var err error
	switch want := map[string]int{ExplainGap: 2, ExplainHOL: 1, ExplainSweep: 1, ExplainStorm: 1}[kind]; {
	case kind == ExplainEngines:
		err = e.engines(files)
	case want == 0:
		return fmt.Errorf("%w: unknown kind %q (want gap, hol, sweep, storm or engines)", ErrUsage, kind)
	case len(files) != want:
		return fmt.Errorf("%w: %s wants %d JSON file(s), got %d", ErrUsage, kind, want, len(files))
	case kind == ExplainGap:
		err = e.gap(files[0], files[1])
	case kind == ExplainSweep:
		err = e.sweep(files[0])
	default:
		err = e.hol(files[0], kind == ExplainStorm)
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, e.out.String()); err != nil {
		return err
	}
	if len(e.bad) > 0 {
		return fmt.Errorf("%w: %s", ErrFailed, strings.Join(e.bad, "; "))
	}
	return nil
}

// explainer gathers the sentences and the runs that failed.
type explainer struct {
	out strings.Builder
	bad []string
}

func (e *explainer) say(format string, args ...any) { fmt.Fprintf(&e.out, format+"\n", args...) }

// check notes the run's failures and non-2xx responses, allowing those in
// allowed.
func (e *explainer) check(label string, r *jsonResult, allowed map[int]bool) {
	if r.FailedRequests > 0 {
		e.bad = append(e.bad, fmt.Sprintf("%s: %d failed requests", label, r.FailedRequests))
	}
	unexpected := r.Non2xx
	for code, n := range r.Non2xxByStatus {
		if allowed[code] {
			unexpected -= n
		}
	}
	if unexpected > 0 {
		e.bad = append(e.bad, fmt.Sprintf("%s: %d non-2xx responses (%s)", label, unexpected, statusList(r.Non2xxByStatus)))
	}
}

// statusList is "403: 12, 429: 3".
func statusList(m map[int]int64) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d: %d", c, m[c])
	}
	return strings.Join(parts, ", ")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("loadtest: explain: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("loadtest: explain: %s: %w", path, err)
	}
	return nil
}

// gapJSON and holJSON are what WriteGapJSON and WriteHOLJSON write.
type gapJSON struct {
	Static  jsonResult `json:"static"`
	Dynamic jsonResult `json:"dynamic"`
	Gap     float64    `json:"gap"`
}

type holJSON struct {
	ProbeRate float64    `json:"probe_rate"`
	Alone     jsonResult `json:"probe_alone"`
	UnderLoad jsonResult `json:"probe_under_load"`
	Load      jsonResult `json:"load"`
}

// pct is the row of r's percentage table for percent (its max without it).
func pct(r *jsonResult, percent float64) float64 {
	for _, p := range r.Percentiles {
		if p.Percent == percent {
			return p.Latency
		}
	}
	if r.OpenLoop != nil {
		return r.OpenLoop.Corrected.Max
	}
	return r.ConnectionTimes["total"].Max
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// loopText is the loop's figures of r as a clause, "" without them.
func loopText(r *jsonResult) string {
	l := r.Loop
	if l == nil || l.Error != "" {
		return ""
	}
	if l.Utilization == 0 && l.LagP99 == 0 && l.LongestTurn == 0 {
		return "the server exported no loop figures"
	}
	return fmt.Sprintf("the loop was %.0f%% busy, its lag p99 %.2f ms and its longest turn %.2f ms",
		100*l.Utilization, l.LagP99, l.LongestTurn)
}

func (e *explainer) gap(newPath, keepPath string) error {
	var nc, ka gapJSON
	if err := errors.Join(readJSON(newPath, &nc), readJSON(keepPath, &ka)); err != nil {
		return err
	}
	for _, g := range []struct {
		label string
		g     *gapJSON
	}{{"gap, new connections", &nc}, {"gap, keep-alive", &ka}} {
		e.check(g.label+", static", &g.g.Static, nil)
		e.check(g.label+", dynamic", &g.g.Dynamic, nil)
	}
	ref := StateSecrets2002
	e.say("With a new connection per request the static page ran at %.0f req/s and HQ at %.0f, a gap of %.2fx; "+
		"with keep-alive %.0f and %.0f, a gap of %.2fx, against %.2fx for the Perl server of 2002 (%.2f and %.2f req/s).",
		nc.Static.RequestsPerSecond, nc.Dynamic.RequestsPerSecond, nc.Gap,
		ka.Static.RequestsPerSecond, ka.Dynamic.RequestsPerSecond, ka.Gap,
		ref.Ratio(), ref.Static.RequestsPerSecond, ref.Dynamic.RequestsPerSecond)
	gs, gd := ratio(ka.Static.RequestsPerSecond, nc.Static.RequestsPerSecond), ratio(ka.Dynamic.RequestsPerSecond, nc.Dynamic.RequestsPerSecond)
	e.say("Keep-alive multiplied the static rate by %.1fx and HQ's by %.1fx: by that measure, opening and closing the connection "+
		"was %.0f%% of a static request's cost and %.0f%% of HQ's.", gs, gd, 100*max(0, 1-ratio(1, gs)), 100*max(0, 1-ratio(1, gd)))
	if l := loopText(&ka.Dynamic); l != "" {
		why := "the rest of the time it waited for the clients, which share this machine's cores with it"
		if loopUtil(&ka.Dynamic) >= 0.8 {
			why = "near one core's worth of work, the ceiling of a single loop"
		}
		e.say("Serving HQ with keep-alive, %s (%.0f%% on the static page): %s.", l, 100*loopUtil(&ka.Static), why)
	}
	return nil
}

func loopUtil(r *jsonResult) float64 {
	if r.Loop == nil {
		return 0
	}
	return r.Loop.Utilization
}

func (e *explainer) hol(path string, storm bool) error {
	var h holJSON
	if err := readJSON(path, &h); err != nil {
		return err
	}
	e.check("probe alone", &h.Alone, nil)
	e.check("probe under load", &h.UnderLoad, nil)
	a50, a99, u50, u99 := pct(&h.Alone, 50), pct(&h.Alone, 99), pct(&h.UnderLoad, 50), pct(&h.UnderLoad, 99)
	if storm {
		return e.storm(&h, a50, a99, u50, u99)
	}
	e.check("load", &h.Load, nil)
	e.say("Alone, the probe's p50 was %.2f ms and its p99 %.2f ms; while %d clients loaded %s at %.0f req/s they were %.2f and %.2f ms, %.1fx and %.1fx.",
		a50, a99, h.Load.ConcurrencyLevel, shorten(h.Load.DocumentPath), h.Load.RequestsPerSecond, u50, u99, ratio(u50, a50), ratio(u99, a99))
	if page := 1000 / h.Load.RequestsPerSecond; h.Load.RequestsPerSecond > 0 {
		if u50 > 2*a50 {
			e.say("The server completed one loaded page every %.2f ms, so the probe's p50 under load is %.1f pages' worth of waiting: "+
				"a cheap request queues behind the slow ones that are ready before it.", page, u50/page)
		} else {
			e.say("The server completed one loaded page every %.2f ms, too short a wait to hold the probe's median up "+
				"(its p99 alone shows what this machine's other load costs).", page)
		}
	}
	if l := loopText(&h.Load); l != "" {
		e.say("Under the load %s.", l)
	}
	return nil
}

func (e *explainer) storm(h *holJSON, a50, a99, u50, u99 float64) error {
	e.check("login storm", &h.Load, StormStatuses)
	l := &h.Load
	checked, limited := l.Non2xxByStatus[403], l.Non2xxByStatus[429]
	e.say("%d clients sent %d logins with a wrong password in %.1f s (%.1f a second, %.0f ms each on average): "+
		"%d were checked and refused (403), %d stopped by the per-address limit (429).",
		l.ConcurrencyLevel, l.CompleteRequests, l.TimeTakenSeconds, l.RequestsPerSecond, l.ConnectionTimes["total"].Mean, checked, limited)
	e.say("Meanwhile the probe's p50 went from %.2f to %.2f ms and its p99 from %.2f to %.2f ms (%.1fx and %.1fx).",
		a50, u50, a99, u99, ratio(u50, a50), ratio(u99, a99))
	if lp := l.Loop; lp != nil && lp.Error == "" && l.CompleteRequests > 0 && lp.Utilization > 0 {
		// The loop's whole busy time over the logins bounds the loop time
		// one login took (the probe's share is in it too).
		perLogin := 1000 * lp.Utilization * l.TimeTakenSeconds / float64(l.CompleteRequests)
		workPer := lp.WorkTime / float64(l.CompleteRequests)
		var where string
		switch {
		case lp.WorkTime > 0 && workPer > perLogin:
			where = fmt.Sprintf("while the worker pool worked %.0f ms per login: the hashing ran there, off the loop", workPer)
		case perLogin < StormLoopBound:
			where = "less than a bcrypt hash takes (tens of ms at its default cost): the hashing ran off the loop"
		default:
			where = "as long as a hash: the hashing seems to run on the loop"
		}
		felt := "the probe hardly felt the storm"
		if u99 > 2*a99 {
			felt = fmt.Sprintf("what the probe lost is CPU time shared with the hashing on this machine's %d cores", runtime.NumCPU())
		}
		e.say("The loop was %.1f%% busy against %.1f%% with the probe alone (lag p99 %.2f ms, longest turn %.2f ms): "+
			"at most %.2f ms of loop time per login, %s; %s.",
			100*lp.Utilization, 100*loopUtil(&h.Alone), lp.LagP99, lp.LongestTurn, perLogin, where, felt)
	}
	return nil
}

// sweepJSON is what WriteSweepsJSON writes for one URL.
type sweepJSON struct {
	URL   string `json:"url"`
	Knee  int    `json:"knee_concurrency"`
	Steps []struct {
		Concurrency int        `json:"concurrency"`
		LittleHolds bool       `json:"little_holds"`
		Result      jsonResult `json:"result"`
	} `json:"steps"`
}

func (e *explainer) sweep(path string) error {
	var sweeps []sweepJSON
	if err := readJSON(path, &sweeps); err != nil {
		return err
	}
	for _, s := range sweeps {
		if len(s.Steps) == 0 {
			continue
		}
		peak, held := 0, 0
		for i := range s.Steps {
			st := &s.Steps[i]
			e.check(fmt.Sprintf("sweep %s -c %d", shorten(st.Result.DocumentPath), st.Concurrency), &st.Result, nil)
			if st.Result.RequestsPerSecond > s.Steps[peak].Result.RequestsPerSecond {
				peak = i
			}
			if st.LittleHolds {
				held++
			}
		}
		first, last, top := &s.Steps[0], &s.Steps[len(s.Steps)-1], &s.Steps[peak]
		path := shorten(first.Result.DocumentPath)
		knee := fmt.Sprintf("no knee: throughput still grew or p99 held from -c %d to %d", first.Concurrency, last.Concurrency)
		if s.Knee > 0 {
			knee = fmt.Sprintf("the knee is at -c %d, past which more clients only queue", s.Knee)
		}
		e.say("%s: %.0f req/s at -c %d, a peak of %.0f at -c %d, and p99 from %.2f ms at -c %d to %.2f ms at -c %d; %s.",
			path, first.Result.RequestsPerSecond, first.Concurrency, top.Result.RequestsPerSecond, top.Concurrency,
			pct(&first.Result, 99), first.Concurrency, pct(&last.Result, 99), last.Concurrency, knee)
		sentence := fmt.Sprintf("Little's law (clients = rate x mean latency) held on %d of %d steps", held, len(s.Steps))
		if l := loopText(&last.Result); l != "" {
			sentence += fmt.Sprintf("; at -c %d %s", last.Concurrency, l)
		}
		e.say("%s.", sentence)
	}
	return nil
}

// engineRuns are one engine's three runs (EngineFiles).
type engineRuns struct {
	label  string
	nc, ka gapJSON
	hol    holJSON
}

func (e *explainer) engines(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: engines wants LABEL=DIR arguments", ErrUsage)
	}
	var engines []engineRuns
	for _, a := range args {
		i := strings.LastIndexByte(a, '=')
		if i <= 0 {
			return fmt.Errorf("%w: engines: %q is not LABEL=DIR", ErrUsage, a)
		}
		r := engineRuns{label: a[:i]}
		dir := a[i+1:]
		err := errors.Join(readJSON(filepath.Join(dir, EngineFiles[0]), &r.nc), readJSON(filepath.Join(dir, EngineFiles[1]), &r.ka),
			readJSON(filepath.Join(dir, EngineFiles[2]), &r.hol))
		if err != nil {
			return err
		}
		for _, c := range []struct {
			what string
			r    *jsonResult
		}{{"static, new connections", &r.nc.Static}, {"HQ, new connections", &r.nc.Dynamic},
			{"static, keep-alive", &r.ka.Static}, {"HQ, keep-alive", &r.ka.Dynamic},
			{"probe alone", &r.hol.Alone}, {"probe under load", &r.hol.UnderLoad}, {"hol load", &r.hol.Load}} {
			e.check(r.label+": "+c.what, c.r, nil)
		}
		engines = append(engines, r)
	}
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "server\tstatic req/s\tHQ req/s\tgap\tstatic -k\tHQ -k\tgap -k\tprobe p99 alone\tprobe p99 under HQ")
	for _, r := range engines {
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.2fx\t%.0f\t%.0f\t%.2fx\t%.2f ms\t%.2f ms\n", r.label,
			r.nc.Static.RequestsPerSecond, r.nc.Dynamic.RequestsPerSecond, r.nc.Gap,
			r.ka.Static.RequestsPerSecond, r.ka.Dynamic.RequestsPerSecond, r.ka.Gap,
			pct(&r.hol.Alone, 99), pct(&r.hol.UnderLoad, 99))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	base := &engines[0]
	for _, r := range engines[1:] {
		e.say("%s served static at %.2fx and HQ at %.2fx the rate of %s with keep-alive (%.2fx and %.2fx with a new connection each); "+
			"under HQ load its probe's p99 was %.2f ms against %.2f ms.", r.label,
			ratio(r.ka.Static.RequestsPerSecond, base.ka.Static.RequestsPerSecond), ratio(r.ka.Dynamic.RequestsPerSecond, base.ka.Dynamic.RequestsPerSecond),
			base.label,
			ratio(r.nc.Static.RequestsPerSecond, base.nc.Static.RequestsPerSecond), ratio(r.nc.Dynamic.RequestsPerSecond, base.nc.Dynamic.RequestsPerSecond),
			pct(&r.hol.UnderLoad, 99), pct(&base.hol.UnderLoad, 99))
	}
	best, fastest := 0, 0
	for i, r := range engines {
		if pct(&r.hol.UnderLoad, 99) < pct(&engines[best].hol.UnderLoad, 99) {
			best = i
		}
		if r.ka.Dynamic.RequestsPerSecond > engines[fastest].ka.Dynamic.RequestsPerSecond {
			fastest = i
		}
	}
	e.say("HQ with keep-alive was fastest on %s (%.0f req/s) and the probe under HQ load kept the shortest p99 on %s (%.2f ms); "+
		"every server here runs the handlers one at a time, so what differs is the I/O around them: one epoll loop, or a goroutine per connection.",
		engines[fastest].label, engines[fastest].ka.Dynamic.RequestsPerSecond, engines[best].label, pct(&engines[best].hol.UnderLoad, 99))
	return nil
}
