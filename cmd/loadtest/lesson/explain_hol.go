package lesson

import (
	"fmt"
	"runtime"
	"strings"
	"text/tabwriter"
)

// holRuns are one variant's repeats of the head-of-line scenario, and the
// spreads of its figures over them.
type holRuns struct {
	label string
	runs  []*holJSON

	a50, a99, u50, u99, uMax Spread // the probe, alone and under load, ms
	p99x, p50x               Spread // under load over alone, per repeat
	rate, busy               Spread // the load's req/s and the loop's utilization under it
	cpu                      Spread // the server's CPU per loaded request, us
	cpuOK                    bool
}

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
	h.p50x = f(func(r *holJSON) float64 { return ratio(pct(&r.UnderLoad, 50), pct(&r.Alone, 50)) })
	h.rate = f(func(r *holJSON) float64 { return r.Load.RequestsPerSecond })
	h.busy = f(func(r *holJSON) float64 { return 100 * loopUtil(&r.Load) })
	h.cpu, h.cpuOK = cpuSpread(runs, func(r *holJSON) *result { return &r.Load })
	return h, nil
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
		b, a := vs[0], vs[1]
		e.say("%s", Compare("the probe's p99 under load", b.label, b.u99, a.label, a.u99, Ms))
		if b.cpuOK && a.cpuOK {
			e.say("%s", Compare("server CPU per loaded page", b.label, b.cpu, a.label, a.cpu, Us))
		}
	}
	return nil
}

// holLesson is one variant's sentences: what the load did to the probe.
func (e *explainer) holLesson(h *holRuns) {
	r := h.runs[0]
	e.say("%s: %d connections loaded %s at %s; under that load the probe's p99 was %s its p99 alone and its p50 %s (per repeat).",
		capitalize(h.label), r.Load.ConcurrencyLevel, shorten(r.Load.DocumentPath), h.rate.Format(PerSecond),
		h.p99x.Format(Times), h.p50x.Format(Times))
	e.say("%s", Compare("the probe's p99 on "+h.label, "under load", h.u99, "alone", h.a99, Ms))
	if h.cpuOK {
		busy := ""
		if loopKnown(h) {
			busy = fmt.Sprintf("; the loop was %s busy under the load", h.busy.Format(percent))
		}
		e.say("Each loaded page cost the server %s of CPU (the probe's pages and the server's idle work counted in)%s.", h.cpu.Format(Us), busy)
	}
}

// percent formats a percentage.
func percent(v float64) string { return fmt.Sprintf("%.0f%%", v) }

// holTable writes one row per variant: the probe alone and under load,
// the load, the server's CPU per loaded page and the loop.
func (e *explainer) holTable(vs []*holRuns) error {
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "server\tprobe p50 alone\tp99 alone\tp50 under load\tp99 under load\tworst under load\tload\tserver CPU/page\tloop busy\trepeats\n")
	for _, h := range vs {
		cpu := "-"
		if h.cpuOK {
			cpu = h.cpu.Format(Us)
		}
		busy := "-"
		if loopKnown(h) {
			busy = h.busy.Format(percent)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", h.label, h.a50.Format(Ms), h.a99.Format(Ms), h.u50.Format(Ms),
			h.u99.Format(Ms), h.uMax.Format(Ms), h.rate.Format(PerSecond), cpu, busy, len(h.runs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; the probe's latencies corrected for coordinated omission)")
	return nil
}

// stormFigures are a storm variant's figures per login.
type stormFigures struct {
	logins, perSecond, loopPerLogin, workPerLogin, cpuPerLogin Spread
	checked, limited                                           int64
}

func stormOf(h *holRuns) stormFigures {
	var s stormFigures
	f := func(g func(*holJSON) float64) Spread { return spreadOf(h.runs, g) }
	s.logins = f(func(r *holJSON) float64 { return float64(r.Load.CompleteRequests) })
	s.perSecond = f(func(r *holJSON) float64 { return r.Load.RequestsPerSecond })
	s.loopPerLogin = f(func(r *holJSON) float64 {
		return ratio(1000*loopUtil(&r.Load)*r.Load.TimeTakenSeconds, float64(r.Load.CompleteRequests))
	})
	s.workPerLogin = f(func(r *holJSON) float64 {
		if r.Load.Loop == nil {
			return 0
		}
		return ratio(r.Load.Loop.WorkTime, float64(r.Load.CompleteRequests))
	})
	s.cpuPerLogin = f(func(r *holJSON) float64 { c, _ := cpuUS(&r.Load); return c / 1000 })
	for _, r := range h.runs {
		s.checked += r.Load.non2xx()[403]
		s.limited += r.Load.non2xx()[429]
	}
	return s
}

func (e *explainer) storm(vs []*holRuns) error {
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "server\tprobe p99 alone\tp99 in the storm\tworst wait in the storm\tlogins/s\tserver CPU/login\tloop time/login\tworker pool/login\trepeats\n")
	figs := make([]stormFigures, len(vs))
	for i, h := range vs {
		figs[i] = stormOf(h)
		s := figs[i]
		cpu := "-"
		if h.cpuOK {
			cpu = s.cpuPerLogin.Format(Ms)
		}
		loop, pool := "-", "-"
		if loopKnown(h) {
			loop, pool = "<= "+s.loopPerLogin.Format(Ms), s.workPerLogin.Format(Ms)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", h.label, h.a99.Format(Ms), h.u99.Format(Ms), h.uMax.Format(Wait),
			s.perSecond.Format(func(v float64) string { return fmt.Sprintf("%.1f", v) }), cpu, loop, pool, len(h.runs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; loop time per login is the loop's whole busy time " +
		"over the logins, the probe's share included, so at most that)")
	for i, h := range vs {
		e.stormLesson(h, figs[i])
	}
	if len(vs) == 2 {
		b, a := vs[0], vs[1]
		e.say("%s", Compare("the probe's worst wait during the storm", b.label, b.uMax, a.label, a.uMax, Wait))
		e.say("%s", Compare("the probe's p99 during the storm", b.label, b.u99, a.label, a.u99, Ms))
		if b.cpuOK && a.cpuOK {
			e.say("%s", Compare("server CPU per login", b.label, figs[0].cpuPerLogin, a.label, figs[1].cpuPerLogin, Ms))
		}
	}
	return nil
}

// stormLesson is one storm variant's sentences: the logins, where they
// were hashed, and what the probe waited.
func (e *explainer) stormLesson(h *holRuns, s stormFigures) {
	l := &h.runs[0].Load
	e.say("%s: %d clients sent %s logins with a wrong password a run (%s a second), %s mean each: "+
		"%d were checked and refused (403), %d stopped by the per-address limit (429), over %d runs.",
		capitalize(h.label), l.ConcurrencyLevel, s.logins.Format(func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		s.perSecond.Format(func(v float64) string { return fmt.Sprintf("%.1f", v) }),
		Ms(l.ConnectionTimes["total"].Mean), s.checked, s.limited, len(h.runs))
	felt := fmt.Sprintf("the probe waited %s at worst and its p99 was %s %s", h.uMax.Format(Wait), h.p99x.Format(Times), probeShare(h))
	if !loopKnown(h) {
		e.say("Meanwhile %s (the server reports no event-loop figures: net/http has no loop, and without -metrics none are read).", felt)
		return
	}
	var where string
	switch loop, work := s.loopPerLogin.Median, s.workPerLogin.Median; {
	case work > 0 && work > loop:
		where = fmt.Sprintf("the worker pool worked %s per login: the hashing ran there, off the loop", Ms(work))
	case loop < StormLoopBound:
		where = "less than a bcrypt hash takes (tens of ms at its default cost): the hashing ran off the loop"
	default:
		where = "as long as a hash, and the worker pool did not work: the hashing ran on the loop, and every other client waited for it"
	}
	e.say("The loop was busy at most %s per login (%s busy), %s; meanwhile %s.", s.loopPerLogin.Format(Ms), h.busy.Format(percent), where, felt)
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

// probeShare says what the probe's p99 ratio is against.
func probeShare(h *holRuns) string {
	if h.p99x.Median > 2 && h.busy.Median < 50 && loopKnown(h) {
		return fmt.Sprintf("its p99 alone: the loop was free, so what it lost is CPU time shared with the hashing on this machine's %d cores",
			runtime.NumCPU())
	}
	return strings.TrimSpace("its p99 alone")
}
