package lesson

import (
	"fmt"
	"text/tabwriter"
)

// holRuns are one variant's repeats of the head-of-line scenario, and the
// spreads of its figures over them.
type holRuns struct {
	label string
	runs  []*holJSON

	a50, a99, u50, u99, uMax Spread // the probe, alone and under load, ms
	p99x                     Spread // the p99 under load over alone, per repeat
	rate, busy               Spread // the load's req/s and the loop's utilization under it
	cpu                      Spread // the server's CPU per loaded request, us
	cpuOK                    bool
	a99N, u99N               int64  // the fewest responses a repeat's p99 alone and under load rests on
	asked, got               Spread // the probe's due requests under load, and those answered

	// The loop's attribution of the probe's requests under load (the
	// load's metrics, route ProbeRoute): p99, mean (exact: the
	// histogram's sum over its count) and worst (a bucket's bound) wait
	// behind other work on the loop and for a CPU, ms, and the fewest
	// requests a repeat attributed; waitOK when every repeat has it.
	holWait, cpuWait, holWorst Spread
	holMean, cpuMean           Spread
	waitN                      int64
	waitOK                     bool
}

// ProbeRoute is the route State Secrets' server serves the probe's page,
// "/", with: the label of its wait histograms in the server's metrics
// (gameserver_request_head_of_line_seconds{route="GET /{$}"}).
const ProbeRoute = "GET /{$}"

// newHOLRuns reads v's repeats and computes their spreads.
func (e *explainer) newHOLRuns(v variant, storm bool) (*holRuns, error) {
	runs, err := readRuns[holJSON](v, kindHOL)
	if err != nil {
		return nil, err
	}
	h := &holRuns{label: v.label, runs: runs}
	for i, r := range runs {
		at := fmt.Sprintf("%s, repeat %d: ", v.label, i+1)
		e.check(at+"probe alone", &r.Alone, nil)
		e.check(at+"probe under load", &r.UnderLoad, nil)
		if storm {
			e.check(at+"login storm", &r.Load, StormStatuses)
		} else {
			e.check(at+"load", &r.Load, nil)
		}
	}
	f := func(g func(*holJSON) float64) Spread { return spreadOf(runs, g) }
	h.a50, h.a99 = f(func(r *holJSON) float64 { return pct(&r.Alone, 50) }), f(func(r *holJSON) float64 { return pct(&r.Alone, 99) })
	h.u50, h.u99 = f(func(r *holJSON) float64 { return pct(&r.UnderLoad, 50) }), f(func(r *holJSON) float64 { return pct(&r.UnderLoad, 99) })
	h.uMax = f(func(r *holJSON) float64 { return maxMS(&r.UnderLoad) })
	h.p99x = f(func(r *holJSON) float64 { return ratio(pct(&r.UnderLoad, 99), pct(&r.Alone, 99)) })
	h.rate = f(func(r *holJSON) float64 { return r.Load.RequestsPerSecond })
	h.busy = f(func(r *holJSON) float64 { return 100 * loopUtil(&r.Load) })
	h.cpu, h.cpuOK = cpuSpread(runs, func(r *holJSON) *result { return &r.Load })
	h.a99N, h.u99N = fewest(runs, func(r *holJSON) *result { return &r.Alone }), fewest(runs, func(r *holJSON) *result { return &r.UnderLoad })
	h.asked, h.got = f(func(r *holJSON) float64 { return float64(r.UnderLoad.asked()) }), f(func(r *holJSON) float64 { return float64(r.UnderLoad.CompleteRequests) })
	h.attribution()
	return h, nil
}

// attribution reads the loop's account of the probe's waits under load
// from each repeat's load.
func (h *holRuns) attribution() {
	h.waitOK, h.waitN = true, -1
	probe := func(r *holJSON) *routeWait { return r.Load.route(ProbeRoute) }
	for _, r := range h.runs {
		rw := probe(r)
		if rw == nil {
			h.waitOK = false
			return
		}
		if h.waitN < 0 || rw.Requests < h.waitN {
			h.waitN = rw.Requests
		}
	}
	f := func(g func(*routeWait) float64) Spread {
		return spreadOf(h.runs, func(r *holJSON) float64 { return g(probe(r)) })
	}
	h.holWait, h.cpuWait = f(func(w *routeWait) float64 { return w.HeadOfLine.P99 }), f(func(w *routeWait) float64 { return w.CPUWait.P99 })
	h.holWorst = f(func(w *routeWait) float64 { return w.HeadOfLine.MaxBound })
	h.holMean, h.cpuMean = f(func(w *routeWait) float64 { return w.HeadOfLine.Mean }), f(func(w *routeWait) float64 { return w.CPUWait.Mean })
}

// fewest is the fewest responses of any run's result.
func fewest[T any](runs []*T, res func(*T) *result) int64 {
	n := int64(-1)
	for _, r := range runs {
		if c := res(r).CompleteRequests; n < 0 || c < n {
			n = c
		}
	}
	return max(n, 0)
}

// p99Of is a p99 spread over repeats the fewest of which had n
// responses: "n/a (k responses)" from under MinP99Samples.
func p99Of(s Spread, n int64, f Figure) string {
	if n < MinP99Samples {
		return fmt.Sprintf("n/a (%d responses)", n)
	}
	return s.Format(f)
}

func (e *explainer) hol(storm bool, args []string) error {
	defaults := []string{"before", "after"}
	if len(args) == 1 {
		defaults[0] = "the server"
	}
	var vs []*holRuns
	for i, a := range args {
		h, err := e.newHOLRuns(parseVariant(a, defaults[i]), storm)
		if err != nil {
			return err
		}
		vs = append(vs, h)
	}
	if storm {
		return e.storm(vs)
	}
	if err := e.holTable(vs); err != nil {
		return err
	}
	for _, h := range vs {
		e.holLesson(h)
	}
	if len(vs) == 2 {
		e.holPair(vs[0], vs[1])
	}
	return nil
}

// holPair compares the two variants: by the loop's attribution and CPU
// per page first, and the client's p99 under load as context when the
// machine was busy; each comparison once, with one ratio.
func (e *explainer) holPair(b, a *holRuns) {
	client := func() {
		if b.u99N < MinP99Samples || a.u99N < MinP99Samples {
			e.say("The probe's p99 under load is not compared: %s had %d responses, %s %d; a p99 needs %d.",
				b.label, b.u99N, a.label, a.u99N, MinP99Samples)
			return
		}
		e.say("%s%s", e.context(), Compare("the probe's p99 under load (the client's latency)", b.label, b.u99, a.label, a.u99, Ms))
	}
	if !e.busy() {
		client()
	}
	switch {
	case !b.waitOK || !a.waitOK:
	case b.waitN >= MinP99Samples && a.waitN >= MinP99Samples:
		e.say("%s", Compare("the probe's p99 wait behind other pages on the loop (the loop's attribution)", b.label, b.holWait, a.label, a.holWait, Ms))
	case b.waitN > 0 && a.waitN > 0:
		e.say("%s", Compare(fmt.Sprintf("the probe's mean wait behind other pages on the loop (the loop's attribution; a mean, exact, "+
			"since a repeat attributed as few as %d requests and a p99 needs %d)", min(b.waitN, a.waitN), MinP99Samples),
			b.label, b.holMean, a.label, a.holMean, Ms))
	}
	if b.cpuOK && a.cpuOK {
		e.say("%s", Compare("server CPU time per loaded page", b.label, b.cpu, a.label, a.cpu, Us))
	}
	if e.busy() {
		client()
	}
}

// context prefixes a sentence on the client's latencies on a busy
// machine, where they are context and not the finding.
func (e *explainer) context() string {
	if !e.busy() {
		return ""
	}
	return "As context (the machine was " + string(e.machine) + ": the client's latencies carry its wait for a CPU): "
}

// holLesson is one variant's sentences: what the probe got, the load,
// the loop's attribution of the probe's wait, the client's latencies
// (context on a busy machine) and the server's CPU per page.
func (e *explainer) holLesson(h *holRuns) {
	e.asked(h)
	r := h.runs[0]
	e.say("%s: %d connections loaded %s at %s.", capitalize(h.label), r.Load.ConcurrencyLevel, shorten(r.Load.DocumentPath), h.rate.Format(PerSecond))
	e.attributed(h, "other pages")
	if h.a99N < MinP99Samples || h.u99N < MinP99Samples {
		e.say("%sThe probe's p99 on %s: alone %s, under load %s: no percentile from fewer than %d responses.", e.context(), h.label,
			p99Of(h.a99, h.a99N, Ms), p99Of(h.u99, h.u99N, Ms), MinP99Samples)
	} else {
		e.say("%s%s", e.context(), Compare("the probe's p99 on "+h.label+" (the client's latency)", "under load", h.u99, "alone", h.a99, Ms))
	}
	if h.cpuOK {
		busy := ""
		if loopKnown(h) {
			busy = fmt.Sprintf("; the loop was %s busy under the load (wall time)", h.busy.Format(percent))
		}
		e.say("Each loaded page cost the server %s of CPU time (the probe's pages and the server's idle work counted in)%s.", h.cpu.Format(Us), busy)
	}
}

// asked says first when the probe under load got fewer answers than
// its schedule asked for: the plainest form of the lesson.
func (e *explainer) asked(h *holRuns) {
	if h.got.Median >= h.asked.Median && h.got.Min >= h.asked.Min {
		return
	}
	e.say("%s: the probe asked for %s requests under load and got %s answered.", capitalize(h.label),
		h.asked.Format(count), h.got.Format(count))
}

// attributed is the loop's account of the probe's wait under load, or
// what the server could not say; behind names what the loop ran.
func (e *explainer) attributed(h *holRuns, behind string) {
	switch {
	case !h.waitOK && !loopKnown(h):
		e.say("The probe's wait is not attributed: the server reports no event loop (net/http has none: a goroutine per connection, " +
			"handlers under one lock; and without -metrics none is read), so only the client's latencies and the server's CPU time tell.")
	case !h.waitOK:
		e.say("The server did not attribute the probe's wait (no wait figures in its metrics).")
	case h.waitN < MinP99Samples:
		e.say("By the loop's own account the probe waited at most %s behind %s on the loop (the lesson; a bucket's bound, "+
			"the p99 n/a (%d requests attributed)) and for a CPU p99 n/a; on average %s behind %s and %s for a CPU (means, exact).",
			h.holWorst.Format(Wait), behind, h.waitN, h.holMean.Format(Ms), behind, h.cpuMean.Format(Ms))
	default:
		e.say("By the loop's own account the probe waited p99 %s behind %s on the loop (the lesson) and %s for a CPU (this machine), "+
			"over at least %d requests it attributed.", h.holWait.Format(Ms), behind, h.cpuWait.Format(Ms), h.waitN)
	}
}

// count formats a whole number.
func count(v float64) string { return fmt.Sprintf("%.0f", v) }

// percent formats a percentage.
func percent(v float64) string { return fmt.Sprintf("%.0f%%", v) }

// holTable writes one row per variant: the probe alone and under load,
// the load, the server's CPU per loaded page and the loop.
func (e *explainer) holTable(vs []*holRuns) error {
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "server\tprobe p50 alone\tp99 alone\tp50 under load\tp99 under load\tworst under load\tload\t"+
		"wait on the loop p99\tfor a CPU p99\tserver CPU/page\tloop busy\trepeats\n")
	for _, h := range vs {
		cpu := "-"
		if h.cpuOK {
			cpu = h.cpu.Format(Us)
		}
		busy := "-"
		if loopKnown(h) {
			busy = h.busy.Format(percent)
		}
		hw, cw := "-", "-"
		if h.waitOK {
			hw, cw = p99Of(h.holWait, h.waitN, Ms), p99Of(h.cpuWait, h.waitN, Ms)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", h.label, h.a50.Format(Ms), p99Of(h.a99, h.a99N, Ms),
			h.u50.Format(Ms), p99Of(h.u99, h.u99N, Ms), h.uMax.Format(Ms), h.rate.Format(PerSecond), hw, cw, cpu, busy, len(h.runs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; the probe's latencies corrected for coordinated omission; " +
		"its wait on the loop and for a CPU under load by the loop's own account; server CPU is CPU time, loop busy wall time)")
	return nil
}

// loopKnown reports whether every run of h has the server loop's figures
// (a server without an event loop, net/http, exports them as zeros).
func loopKnown(h *holRuns) bool {
	for _, r := range h.runs {
		if !hasLoop(&r.Load) {
			return false
		}
	}
	return true
}

// hasLoop reports whether r has figures of the server's event loop.
func hasLoop(r *result) bool {
	l := r.Loop
	return l != nil && l.Error == "" && (l.Utilization > 0 || l.LagP99 > 0 || l.LongestTurn > 0)
}
