package lesson

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// gapRuns are one connection mode's repeats of the gap.
type gapRuns struct {
	mode string
	runs []*gapJSON
}

func (e *explainer) gap(nc, ka variant) error {
	var modes [2]gapRuns
	for i, v := range []variant{nc, ka} {
		runs, err := readRuns[gapJSON](v, kindGap)
		if err != nil {
			return err
		}
		modes[i] = gapRuns{v.label, runs}
		for j, g := range runs {
			e.check(fmt.Sprintf("gap, %s, repeat %d, static", v.label, j+1), &g.Static, nil)
			e.check(fmt.Sprintf("gap, %s, repeat %d, dynamic", v.label, j+1), &g.Dynamic, nil)
		}
	}
	if err := e.gapTable(modes); err != nil {
		return err
	}
	static := func(g *gapJSON) *result { return &g.Static }
	dynamic := func(g *gapJSON) *result { return &g.Dynamic }
	for _, m := range []gapRuns{modes[1], modes[0]} {
		s, okS := cpuSpread(m.runs, static)
		d, okD := cpuSpread(m.runs, dynamic)
		if !okS || !okD {
			e.say("With %s the server's CPU was not read (no -metrics, or a server without process_cpu_seconds_total): "+
				"only requests per second below, which this machine's other load moves.", m.mode)
			continue
		}
		e.say("%s", Compare("server CPU per request with "+m.mode, "HQ", d, "the static page", s, Us))
	}
	for _, m := range []gapRuns{modes[1], modes[0]} {
		rps := func(r func(*gapJSON) *result) Spread {
			return spreadOf(m.runs, func(g *gapJSON) float64 { return r(g).RequestsPerSecond })
		}
		e.say("%s%s", e.context(), Compare("requests per second with "+m.mode, "the static page", rps(static), "HQ", rps(dynamic), PerSecond))
	}
	ref := StateSecrets2002
	e.say("The Perl server of 2002 served the static page at %.2f and HQ at %.2f req/s (%s), %.2fx.",
		ref.Static.RequestsPerSecond, ref.Dynamic.RequestsPerSecond, strings.Trim(strings.TrimPrefix(ref.Label, "State Secrets 2002 "), "()"), ref.Ratio())
	if s0, ok0 := cpuSpread(modes[0].runs, static); ok0 {
		if s1, ok1 := cpuSpread(modes[1].runs, static); ok1 {
			e.say("%s", Compare("the static page's server CPU per request", "a new connection each", s0, "keep-alive", s1, Us))
		}
	}
	ka0 := modes[1].runs[len(modes[1].runs)/2]
	if l := loopText(&ka0.Dynamic); l != "" {
		e.say("Serving HQ with keep-alive (repeat %d), %s.", len(modes[1].runs)/2+1, l)
	}
	return nil
}

// gapTable writes each mode's pages: requests per second and server CPU
// per request, median [range] over the repeats, and the p99.
func (e *explainer) gapTable(modes [2]gapRuns) error {
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "connections\tpage\treq/s\tserver CPU/request\tp99\trepeats\n")
	for _, m := range modes {
		for _, page := range []struct {
			name string
			r    func(*gapJSON) *result
		}{{"static /", func(g *gapJSON) *result { return &g.Static }}, {"HQ", func(g *gapJSON) *result { return &g.Dynamic }}} {
			rps := spreadOf(m.runs, func(g *gapJSON) float64 { return page.r(g).RequestsPerSecond })
			p99 := spreadOf(m.runs, func(g *gapJSON) float64 { return pct(page.r(g), 99) })
			n := fewest(m.runs, page.r)
			cpu := "-"
			if c, ok := cpuSpread(m.runs, page.r); ok {
				cpu = c.Format(Us)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\n", m.mode, page.name, rps.Format(PerSecond), cpu, p99Of(p99, n, Ms), len(m.runs))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; server CPU is CPU time)")
	return nil
}
