package lesson

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// HOLLoad is what FitHOL scales of the head-of-line scenario: the
// load's rate in requests per second (loadtest hol's -load-rate) and
// each phase's length in seconds, the probe alone and under load (-t).
type HOLLoad struct {
	Rate, Seconds float64
}

// PageCost is what the loaded page costs a server loop on this machine,
// from a run of that page with the server's metrics: the pages served,
// and over the run the time the loop's thread ran on a CPU and the time
// it was runnable but waiting for one (loadtest's LoopWait). The two
// times over the pages are the wall time one page holds the loop: what
// it can serve a second with the CPU the machine gives it.
type PageCost struct {
	Pages            int64
	LoopCPU, CPUWait time.Duration
}

// The rule FitHOL applies.
const (
	// HOLFitShare is the share of the loop's capacity for the loaded page
	// that a scaled load asks for: half, so that the loop idles about
	// half the time, the pages do not queue, and the probe's requests
	// are answered between them.
	HOLFitShare = 0.5
	// HOLSampleMargin is how many times MinP99Samples of the probe's
	// requests a scaled run expects answered under load: the probe's
	// answers come in bursts between pages, and a busy machine swings.
	HOLSampleMargin = 3
	// HOLMinPages is how many loaded pages a scaled phase expects at
	// least: each holds up about one of the probe's requests, and the
	// probe's p99 wait behind them must rest on more than a few.
	HOLMinPages = 15
	// HOLMaxStretch bounds a scaled phase at this many times the
	// default's length, so that make loadtest stays bounded in time.
	HOLMaxStretch = 4
)

// FitHOL fits the head-of-line scenario's load to the CPU the machine
// gives the loop, and says what it did and why. On a quiet machine, or
// without the loop's figures, it returns def: the client's latencies hold
// there, and the figures stay comparable from run to run. On a busy or
// saturated one, a load the loop cannot serve queues pages on it for the
// whole run, and the probe's requests, waiting behind them, go
// unanswered: no p99 of the loop's attribution rests on enough of them.
// So when HOLFitShare of the loop's capacity for the page (see PageCost)
// is under def.Rate, the rate becomes that (a whole number, at least 1),
// and each phase lasts long enough for HOLMinPages loaded pages and for
// HOLSampleMargin times MinP99Samples of the probe's answers under load,
// expected from probeRate, the share of its due requests the probe got
// answered alone (answered; 1 when unknown) and the share of the time the
// loop is free of pages: def.Seconds at least, rounded up to half a
// second, at most HOLMaxStretch times def.Seconds. A sentence that fits
// starts "Scaled to this machine: the load at R req/s for S s a phase";
// one that keeps def "The head-of-line load is not scaled". label names
// the page's server.
func FitHOL(machine Verdict, def HOLLoad, probeRate float64, page PageCost, answered float64, label string) (HOLLoad, string) {
	const not = "The head-of-line load is not scaled (%s req/s for %s s a phase): %s."
	wall := page.LoopCPU + page.CPUWait
	switch {
	case machine != Busy && machine != Saturated:
		return def, fmt.Sprintf(not, num(def.Rate), num(def.Seconds), "the machine is quiet")
	case page.Pages <= 0 || page.LoopCPU <= 0:
		return def, fmt.Sprintf(not, num(def.Rate), num(def.Seconds), "the run of the page has no figures of the loop's CPU to fit it to")
	}
	perPage := wall / time.Duration(page.Pages)
	capacity := float64(time.Second) / float64(perPage)
	cost := fmt.Sprintf("on %s a loaded page held the loop %s of wall time (%s on a CPU; the loop got one %s of the time it wanted one), "+
		"so it serves about %s pages a second (a run of the page, %d pages)", label, Ms(ms(perPage)),
		Ms(ms(page.LoopCPU/time.Duration(page.Pages))), percent1(float64(page.LoopCPU)/float64(wall)), num(capacity), page.Pages)
	if HOLFitShare*capacity >= def.Rate {
		return def, fmt.Sprintf(not, num(def.Rate), num(def.Seconds), cost+fmt.Sprintf(", at least %s the %s asked", times(1/HOLFitShare), num(def.Rate)))
	}
	if answered <= 0 || answered > 1 {
		answered = 1
	}
	fit := HOLLoad{Rate: max(1, math.Floor(HOLFitShare*capacity))}
	free := 1 - fit.Rate/capacity
	fit.Seconds = max(HOLSampleMargin*MinP99Samples/(probeRate*answered*free), HOLMinPages/fit.Rate)
	fit.Seconds = min(max(math.Ceil(2*fit.Seconds)/2, def.Seconds), HOLMaxStretch*def.Seconds)
	why := fmt.Sprintf("at %s a second it would be busy %s of the time, over the half that leaves the probe room", num(def.Rate), percent(100*def.Rate/capacity))
	if def.Rate >= capacity {
		why = fmt.Sprintf("at %s a second pages would queue on it for the whole run, and the probe's requests behind them would go unanswered", num(def.Rate))
	}
	return fit, fmt.Sprintf("Scaled to this machine: the load at %s req/s for %s s a phase, not %s req/s for %s s. %s: %s. At %s it is busy "+
		"about %s of the time, and %s s a phase brings about %.0f pages and %.0f of the probe's requests answered under load (at %s req/s, "+
		"%s answered alone, the loop free %s of the time): at least %d pages and %d times the %d responses a p99 needs.",
		num(fit.Rate), num(fit.Seconds), num(def.Rate), num(def.Seconds), capitalize(cost), why, num(fit.Rate), percent(100*(1-free)),
		num(fit.Seconds), fit.Rate*fit.Seconds, probeRate*answered*free*fit.Seconds, num(probeRate), percent(100*answered),
		percent(100*free), HOLMinPages, HOLSampleMargin, MinP99Samples)
}

// times is "twice" for 2, else "N times".
func times(v float64) string {
	if v == 2 {
		return "twice"
	}
	return num(v) + " times"
}

// num is a figure with at most one decimal: "80", "2.5", "17.4".
func num(v float64) string { return strconv.FormatFloat(math.Round(10*v)/10, 'f', -1, 64) }

// holScale is the hol-scale kind: RATE SECONDS PROBE_RATE [LABEL=]PAGE.json
// [PROBE.json], FitHOL's sentence on the default load (RATE req/s for
// SECONDS a phase, the probe at PROBE_RATE) fitted to PAGE's run (a plain
// run of the loaded page with the server's metrics, or a head-of-line
// run, whose load is one) and to PROBE's answered share (a light probe
// alone, as the machine kind reads it).
func (e *explainer) holScale(args []string) error {
	var figures [3]float64
	for i, a := range args[:3] {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return fmt.Errorf("%w: hol-scale: %q is no positive number (want RATE SECONDS PROBE_RATE PAGE.json [PROBE.json])", ErrUsage, a)
		}
		figures[i] = v
	}
	v := parseVariant(args[3], "the server")
	if len(v.files) != 1 {
		return fmt.Errorf("%w: hol-scale wants one PAGE.json, got %q", ErrUsage, args[3])
	}
	page, err := pageOf(v.files[0])
	if err != nil {
		return err
	}
	e.check(v.files[0], page, nil)
	answered := 1.0
	if len(args) == 5 {
		p, err := probeOf(args[4])
		if err != nil {
			return err
		}
		answered = ratio(float64(p.CompleteRequests), float64(p.asked()))
	}
	cost := PageCost{Pages: page.CompleteRequests}
	if page.Loop != nil && page.Loop.Wait != nil {
		d := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
		cost.LoopCPU, cost.CPUWait = d(page.Loop.Wait.LoopCPU), d(page.Loop.Wait.LoopCPUWait)
	}
	_, sentence := FitHOL(e.machine, HOLLoad{Rate: figures[0], Seconds: figures[1]}, figures[2], cost, answered, v.label)
	e.say("%s", sentence)
	return nil
}

// pageOf reads path's run of the loaded page: a plain run's result, or a
// head-of-line run's load.
func pageOf(path string) (*result, error) {
	var h holJSON
	if err := readJSON(path, kindHOL, &h); err == nil && h.Load.CompleteRequests > 0 {
		return &h.Load, nil
	}
	r := new(result)
	if err := readJSON(path, "run", r); err != nil {
		return nil, err
	}
	return r, nil
}
