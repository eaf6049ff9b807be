package lesson

import (
	"github.com/statesecrets/server/loadtest"

	"fmt"
	"io"
	"sort"
	"strings"
)

// Explain writes a table and plain sentences on what the results in args
// show, computed from their figures: the files are what -json-out (or
// -json) wrote, in the versioned envelope or the bare form of schema
// version 1, and kind says which runs they are (ExplainGap and the
// others). Repeats of a run give each figure as its median and range, and
// two figures are compared by Compare's rules: told apart only when their
// ranges do not overlap. Server CPU per request, from the server's
// metrics, leads each comparison when the runs have it: a shared machine
// swings requests per second far more. It is the commentary of make
// loadtest. After writing, it returns an error wrapping ErrFailed that
// names every run with failed requests or unexpected responses; other
// errors are for arguments or files that cannot be read. It takes the
// machine as quiet (see ExplainOn).
func Explain(w io.Writer, kind string, args []string) error {
	return ExplainOn(w, Quiet, kind, args)
}

// ExplainOn is Explain on a machine judged machine (see Judge; "" is
// Quiet): on a Busy or Saturated one, the lessons about waiting lead
// with the server loop's attribution of each request's wait and its CPU
// per request, and the client's latencies follow as context.
func ExplainOn(w io.Writer, machine Verdict, kind string, args []string) error {
	e := explainer{machine: machine}
	var err error
	switch {
	case kind == ExplainEngines:
		err = e.engines(args)
	case kind == ExplainHOLScale && (len(args) == 4 || len(args) == 5):
		err = e.holScale(args)
	case kind == ExplainHOLScale:
		return fmt.Errorf("%w: hol-scale wants RATE SECONDS PROBE_RATE PAGE.json [PROBE.json], got %d argument(s)", ErrUsage, len(args))
	case kind == ExplainMachine && len(args) > 0:
		err = e.judgeMachine(args)
	case kind == ExplainSweep && len(args) == 1:
		err = e.sweep(args[0])
	case kind == ExplainGap && len(args) == 2:
		err = e.gap(parseVariant(args[0], "a new connection each"), parseVariant(args[1], "keep-alive"))
	case (kind == ExplainHOL || kind == ExplainStorm) && (len(args) == 1 || len(args) == 2):
		err = e.hol(kind == ExplainStorm, args)
	case kind == ExplainSweep || kind == ExplainGap || kind == ExplainHOL || kind == ExplainStorm:
		return fmt.Errorf("%w: %s wants %s, got %d argument(s)", ErrUsage, kind,
			map[string]string{ExplainSweep: "one JSON file", ExplainGap: "two (new connection, keep-alive)",
				ExplainHOL: "one or two", ExplainStorm: "one or two"}[kind], len(args))
	case kind == ExplainMachine:
		return fmt.Errorf("%w: machine wants one or more JSON files", ErrUsage)
	default:
		return fmt.Errorf("%w: unknown kind %q (want gap, hol, sweep, storm, engines, machine or hol-scale)", ErrUsage, kind)
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
	out     strings.Builder
	bad     []string
	machine Verdict // the machine's verdict, "" for Quiet
}

// busy reports whether the machine was judged busy or saturated: the
// client's latencies are context, the loop's figures the finding.
func (e *explainer) busy() bool { return e.machine == Busy || e.machine == Saturated }

func (e *explainer) say(format string, args ...any) { fmt.Fprintf(&e.out, format+"\n", args...) }

// check notes the run's failures and non-2xx responses, allowing those in
// allowed.
func (e *explainer) check(label string, r *result, allowed map[int]bool) {
	if r.FailedRequests > 0 {
		e.bad = append(e.bad, fmt.Sprintf("%s: %d failed requests", label, r.FailedRequests))
	}
	unexpected := r.Non2xx
	for code, n := range r.non2xx() {
		if allowed[code] {
			unexpected -= n
		}
	}
	if unexpected > 0 {
		e.bad = append(e.bad, fmt.Sprintf("%s: %d non-2xx responses (%s)", label, unexpected, statusList(r.non2xx())))
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

// variant is one RUNS argument: a label and its repeats' files.
type variant struct {
	label string
	files []string
}

// parseVariant reads "[LABEL=]FILE[,FILE...]"; def is the label when none
// is given.
func parseVariant(arg, def string) variant {
	v := variant{label: def}
	if i := strings.LastIndexByte(arg, '='); i > 0 {
		v.label, arg = arg[:i], arg[i+1:]
	}
	for _, f := range strings.Split(arg, ",") {
		if f = strings.TrimSpace(f); f != "" {
			v.files = append(v.files, f)
		}
	}
	return v
}

// readRuns reads each of v's files as kind's results into a new T.
func readRuns[T any](v variant, kind string) ([]*T, error) {
	if len(v.files) == 0 {
		return nil, fmt.Errorf("%w: %s: no JSON file", ErrUsage, v.label)
	}
	var out []*T
	for _, f := range v.files {
		t := new(T)
		if err := readJSON(f, kind, t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// pct is the row of r's percentage table for percent (its max without it).
func pct(r *result, percent float64) float64 {
	for _, p := range r.Percentiles {
		if p.Percent == percent {
			return p.MS
		}
	}
	return maxMS(r)
}

// maxMS is r's longest request as its report counts it (corrected under
// -rate).
func maxMS(r *result) float64 {
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

// cpuUS is the server's CPU per request of r in microseconds, and whether
// the server said.
func cpuUS(r *result) (float64, bool) {
	if r.Loop == nil || r.Loop.Error != "" || r.Loop.CPU <= 0 || r.CompleteRequests == 0 {
		return 0, false
	}
	return 1000 * r.Loop.CPU / float64(r.CompleteRequests), true
}

// spreadOf is the spread of f over runs.
func spreadOf[T any](runs []*T, f func(*T) float64) Spread {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return SpreadOf(xs)
}

// cpuSpread is the spread of the server's CPU per request of each run's
// result, and whether every run had it.
func cpuSpread[T any](runs []*T, result func(*T) *result) (Spread, bool) {
	all := true
	s := spreadOf(runs, func(t *T) float64 {
		v, ok := cpuUS(result(t))
		all = all && ok
		return v
	})
	return s, all
}

// boundText is a histogram-derived figure of the JSON in ms: "<= 10.00
// ms" when only a bound is known.
func boundJSON(v float64, bound bool) string {
	if bound {
		return "<= " + Ms(v)
	}
	return Ms(v)
}

// loopText is the loop's figures of r as a clause, "" without them.
func loopText(r *result) string {
	l := r.Loop
	if l == nil || l.Error != "" {
		return ""
	}
	if l.Utilization == 0 && l.LagP99 == 0 && l.LongestTurn == 0 {
		return "the server exported no loop figures"
	}
	return fmt.Sprintf("the loop was %.0f%% busy, its lag p99 about %.2f ms and its longest turn %s",
		100*l.Utilization, l.LagP99, boundJSON(l.LongestTurn, l.LongestTurnBound))
}

func loopUtil(r *result) float64 {
	if r.Loop == nil {
		return 0
	}
	return r.Loop.Utilization
}

// kneeText states a sweep's knee with its definition (FindKnee) and the
// step past it, so that a peak at a higher concurrency than the knee's
// reads as the little throughput that step still gained; it says "queue"
// only when the loop was busy enough past the knee to make one (why).
func kneeText(s sweepJSON) string {
	first, last := &s.Steps[0], &s.Steps[len(s.Steps)-1]
	for i := 0; s.Knee > 0 && i+1 < len(s.Steps); i++ {
		at, next := &s.Steps[i], &s.Steps[i+1]
		if at.Concurrency != s.Knee {
			continue
		}
		gain := 100 * (next.Result.RequestsPerSecond/at.Result.RequestsPerSecond - 1)
		moved := fmt.Sprintf("gained %.0f%%", gain)
		if gain < 0 {
			moved = fmt.Sprintf("lost %.0f%%", -gain)
		}
		return fmt.Sprintf("the knee (the last level before a step that gains under %.0f%% throughput while p99 grows over %.0f%%) "+
			"is at -c %d: going to -c %d %s throughput while p99 grew %+.0f%%, %s",
			100*loadtest.KneeRateGrowth, 100*loadtest.KneeP99Growth, at.Concurrency, next.Concurrency,
			moved, 100*(pct(&next.Result, 99)/pct(&at.Result, 99)-1), why(&next.Result))
	}
	return fmt.Sprintf("no knee (no step gained under %.0f%% throughput while p99 grew over %.0f%%) from -c %d to %d",
		100*loadtest.KneeRateGrowth, 100*loadtest.KneeP99Growth, first.Concurrency, last.Concurrency)
}

// QueueUtilization is the loop's utilization from which a sweep's knee
// is read as clients queueing at the loop: below it, the loop had time
// to spare, and what slowed the clients was the machine (more client
// connections competing with the server for the cores).
const QueueUtilization = 0.8

// why says what a step past the knee shows, from the loop's utilization.
func why(r *result) string {
	if !hasLoop(r) {
		return "and the server's loop figures were not read: whether more clients queue at the loop is not known"
	}
	u := 100 * r.Loop.Utilization
	if r.Loop.Utilization >= QueueUtilization {
		return fmt.Sprintf("and the loop was %.0f%% busy, so past it more clients mostly queue at the loop", u)
	}
	return fmt.Sprintf("though the loop was only %.0f%% busy: not a queue at the loop, but more clients competing with the server "+
		"for this machine's %d cores", u, Cores())
}

// busiestRoute is the loop's attribution of r's most attributed route
// as a clause, "" without it.
func busiestRoute(r *result) string {
	if r.Loop == nil || r.Loop.Wait == nil || len(r.Loop.Wait.Routes) == 0 {
		return ""
	}
	top := &r.Loop.Wait.Routes[0]
	for i := range r.Loop.Wait.Routes {
		if rw := &r.Loop.Wait.Routes[i]; rw.Requests > top.Requests {
			top = rw
		}
	}
	return fmt.Sprintf("; by the loop's own account its requests (%s) waited p99 %s behind other work on the loop and %s for a CPU (%d attributed)",
		top.Route, P99Text(top.HeadOfLine.P99, top.Requests, Ms), P99Text(top.CPUWait.P99, top.Requests, Ms), top.Requests)
}

func (e *explainer) sweep(path string) error {
	var sweeps []sweepJSON
	if err := readJSON(path, kindSweep, &sweeps); err != nil {
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
		knee := kneeText(s)
		e.say("%s: %.0f req/s at -c %d, a peak of %.0f at -c %d, and p99 from %s at -c %d to %s at -c %d; %s (one run a step: "+
			"a shared machine moves these figures, so read the shape, not the digits).",
			path, first.Result.RequestsPerSecond, first.Concurrency, top.Result.RequestsPerSecond, top.Concurrency,
			P99Text(pct(&first.Result, 99), first.Result.CompleteRequests, Ms), first.Concurrency,
			P99Text(pct(&last.Result, 99), last.Result.CompleteRequests, Ms), last.Concurrency, knee)
		sentence := fmt.Sprintf("Little's law (clients = rate x mean latency) held on %d of %d steps", held, len(s.Steps))
		if l := loopText(&last.Result); l != "" {
			sentence += fmt.Sprintf("; at -c %d %s", last.Concurrency, l)
		}
		if c, ok := cpuUS(&last.Result); ok {
			sentence += fmt.Sprintf(", the server's CPU time %s a request", Us(c))
		}
		sentence += busiestRoute(&last.Result)
		e.say("%s.", sentence)
	}
	return nil
}
