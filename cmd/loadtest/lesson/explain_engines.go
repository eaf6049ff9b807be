package lesson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// engineRuns are one engine's repeats of EngineFiles.
type engineRuns struct {
	label          string
	keepAlive, new []*gapJSON
	hol            []*holJSON
}

// engineFiles are dir's repeats of the run stem: stem-N.json in N's
// order, or stem.json alone.
func engineFiles(dir, stem string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, stem+"-*.json"))
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool {
		if len(files[i]) != len(files[j]) {
			return len(files[i]) < len(files[j]) // -2 before -10
		}
		return files[i] < files[j]
	})
	if len(files) > 0 {
		return files, nil
	}
	one := filepath.Join(dir, stem+".json")
	if _, err := os.Stat(one); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return []string{one}, nil
}

// readEngine reads one LABEL=DIR argument.
func (e *explainer) readEngine(arg string) (*engineRuns, error) {
	i := strings.LastIndexByte(arg, '=')
	if i <= 0 {
		return nil, fmt.Errorf("%w: engines: %q is not LABEL=DIR", ErrUsage, arg)
	}
	r := &engineRuns{label: arg[:i]}
	dir := arg[i+1:]
	var lists [3][]string
	for j, stem := range EngineFiles {
		files, err := engineFiles(dir, stem)
		if err != nil {
			return nil, fmt.Errorf("loadtest: explain: %w", err)
		}
		lists[j] = files
	}
	if len(lists[0]) == 0 {
		return nil, fmt.Errorf("loadtest: explain: engines: %s has no %s.json or %s-N.json", dir, EngineFiles[0], EngineFiles[0])
	}
	var err error
	if r.keepAlive, err = readRuns[gapJSON](variant{r.label, lists[0]}, kindGap); err != nil {
		return nil, err
	}
	if len(lists[1]) > 0 {
		if r.new, err = readRuns[gapJSON](variant{r.label, lists[1]}, kindGap); err != nil {
			return nil, err
		}
	}
	if len(lists[2]) > 0 {
		if r.hol, err = readRuns[holJSON](variant{r.label, lists[2]}, kindHOL); err != nil {
			return nil, err
		}
	}
	for j, g := range append(append([]*gapJSON(nil), r.keepAlive...), r.new...) {
		e.check(fmt.Sprintf("%s: gap run %d, static", r.label, j+1), &g.Static, nil)
		e.check(fmt.Sprintf("%s: gap run %d, HQ", r.label, j+1), &g.Dynamic, nil)
	}
	for j, h := range r.hol {
		for _, c := range []struct {
			what string
			r    *result
		}{{"probe alone", &h.Alone}, {"probe under load", &h.UnderLoad}, {"hol load", &h.Load}} {
			e.check(fmt.Sprintf("%s: hol run %d, %s", r.label, j+1, c.what), c.r, nil)
		}
	}
	return r, nil
}

// engineFigures are an engine's keep-alive figures over its repeats.
type engineFigures struct {
	staticCPU, hqCPU, staticRate, hqRate Spread
	cpuOK                                bool
}

func figuresOfEngine(r *engineRuns) engineFigures {
	static := func(g *gapJSON) *result { return &g.Static }
	dynamic := func(g *gapJSON) *result { return &g.Dynamic }
	var f engineFigures
	var okS, okD bool
	f.staticCPU, okS = cpuSpread(r.keepAlive, static)
	f.hqCPU, okD = cpuSpread(r.keepAlive, dynamic)
	f.cpuOK = okS && okD
	f.staticRate = spreadOf(r.keepAlive, func(g *gapJSON) float64 { return g.Static.RequestsPerSecond })
	f.hqRate = spreadOf(r.keepAlive, func(g *gapJSON) float64 { return g.Dynamic.RequestsPerSecond })
	return f
}

func (e *explainer) engines(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: engines wants LABEL=DIR arguments", ErrUsage)
	}
	var engines []*engineRuns
	var figs []engineFigures
	for _, a := range args {
		r, err := e.readEngine(a)
		if err != nil {
			return err
		}
		engines = append(engines, r)
		figs = append(figs, figuresOfEngine(r))
	}
	w := tabwriter.NewWriter(&e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "server (keep-alive)\tstatic CPU/request\tHQ CPU/request\tstatic req/s\tHQ req/s\trepeats")
	for i, r := range engines {
		f := figs[i]
		sc, hc := "-", "-"
		if f.cpuOK {
			sc, hc = f.staticCPU.Format(Us), f.hqCPU.Format(Us)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\n", r.label, sc, hc, f.staticRate.Format(PerSecond), f.hqRate.Format(PerSecond), len(r.keepAlive))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	e.say("(each figure: the median [least-greatest] over the interleaved repeats; server CPU per request from each server's process_cpu_seconds_total)")
	base, bf := engines[0], figs[0]
	for i, r := range engines[1:] {
		f := figs[i+1]
		if f.cpuOK && bf.cpuOK {
			e.say("%s", Compare("server CPU time per static request", r.label, f.staticCPU, base.label, bf.staticCPU, Us))
			e.say("%s", Compare("server CPU time per HQ request", r.label, f.hqCPU, base.label, bf.hqCPU, Us))
		}
		e.say("%s%s", e.context(), Compare("HQ's requests per second", r.label, f.hqRate, base.label, bf.hqRate, PerSecond))
	}
	e.say("Every server here runs the handlers one at a time, so what differs is the I/O around them: one epoll loop, " +
		"or a goroutine per connection under one lock.")
	return nil
}
