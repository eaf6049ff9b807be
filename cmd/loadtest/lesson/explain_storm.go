package lesson

import (
	"fmt"
	"runtime"
	"text/tabwriter"
)

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
	fmt.Fprintf(w, "server\tprobe p99 alone\tp99 in the storm\tworst wait in the storm\tworst wait on the loop\tlogins/s\t"+
		"server CPU/login\tloop time/login\tworker pool/login\trepeats\n")
	figs := make([]stormFigures, len(vs))
	for i, h := range vs {
		figs[i] = stormOf(h)
		s := figs[i]
		cpu := "-"
		if h.cpuOK {
			cpu = s.cpuPerLogin.Format(Ms)
		}
		loop, pool, onLoop := "-", "-", "-"
		if loopKnown(h) {
			loop, pool = "<= "+s.loopPerLogin.Format(Ms), s.workPerLogin.Format(Ms)
		}
		if h.waitOK {
			onLoop = "<= " + h.holWorst.Format(Wait)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", h.label, p99Of(h.a99, h.a99N, Ms), p99Of(h.u99, h.u99N, Ms),
			h.uMax.Format(Wait), onLoop, s.perSecond.Format(func(v float64) string { return fmt.Sprintf("%.1f", v) }), cpu, loop, pool, len(h.runs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; the worst wait on the loop is the loop's own account " +
		"of the probe's longest wait behind other work, a bucket's bound; server CPU per login is CPU time, loop time and worker pool " +
		"per login wall time, the loop's whole busy time over the logins, the probe's share included, so at most that)")
	for i, h := range vs {
		e.stormLesson(h, figs[i])
	}
	if len(vs) == 2 {
		e.stormPair(vs[0], vs[1], figs[0], figs[1])
	}
	return nil
}

// stormPair compares the storm's two variants, each comparison once.
func (e *explainer) stormPair(b, a *holRuns, bf, af stormFigures) {
	if b.waitOK && a.waitOK {
		e.say("%s", Compare("the probe's worst wait behind other work on the loop (the loop's attribution, a bucket's bound)",
			b.label, b.holWorst, a.label, a.holWorst, Wait))
	}
	e.say("%s%s", e.context(), Compare("the probe's worst wait during the storm (the client's latency)", b.label, b.uMax, a.label, a.uMax, Wait))
	if b.u99N >= MinP99Samples && a.u99N >= MinP99Samples {
		e.say("%s%s", e.context(), Compare("the probe's p99 during the storm", b.label, b.u99, a.label, a.u99, Ms))
	}
	if b.cpuOK && a.cpuOK {
		e.say("%s", Compare("server CPU time per login", b.label, bf.cpuPerLogin, a.label, af.cpuPerLogin, Ms))
	}
}

// stormLesson is one storm variant's sentences: what the probe got, the
// logins, where they were hashed, and what the probe waited.
func (e *explainer) stormLesson(h *holRuns, s stormFigures) {
	e.asked(h)
	l := &h.runs[0].Load
	e.say("%s: %d clients sent %s logins with a wrong password a run (%s a second), %s mean each: "+
		"%d were checked and refused (403, expected), %d stopped by the per-address limit (429, expected), over %d runs.",
		capitalize(h.label), l.ConcurrencyLevel, s.logins.Format(count),
		s.perSecond.Format(func(v float64) string { return fmt.Sprintf("%.1f", v) }),
		Ms(l.ConnectionTimes["total"].Mean), s.checked, s.limited, len(h.runs))
	e.attributed(h, "the logins")
	felt := fmt.Sprintf("the probe waited %s at worst (the client's latency)", h.uMax.Format(Wait))
	if !loopKnown(h) {
		e.say("Meanwhile %s.", felt)
		return
	}
	var where string
	switch loop, work := s.loopPerLogin.Median, s.workPerLogin.Median; {
	case work > 0 && work > loop:
		where = fmt.Sprintf("the worker pool worked %s of wall time per login: the hashing ran there, off the loop", Ms(work))
	case loop < StormLoopBound:
		where = "less than a bcrypt hash takes (tens of ms at its default cost): the hashing ran off the loop"
	default:
		where = "as long as a hash, and the worker pool did not work: the hashing ran on the loop, and every other client waited for it"
	}
	e.say("The loop was busy at most %s of wall time per login (%s busy), %s; meanwhile %s%s.", s.loopPerLogin.Format(Ms),
		h.busy.Format(percent), where, felt, probeShare(h))
}

// probeShare adds, when the probe's p99 in the storm grew though the
// loop was mostly free, that what it lost was CPU time.
func probeShare(h *holRuns) string {
	if h.u99N >= MinP99Samples && h.a99N >= MinP99Samples && h.p99x.Median > 2 && h.busy.Median < 50 && loopKnown(h) {
		return fmt.Sprintf(", though the loop was free: what it lost is CPU time shared with the hashing on this machine's %d cores",
			runtime.NumCPU())
	}
	return ""
}
