package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
	"github.com/statesecrets/server/internal/version"
	"github.com/statesecrets/server/loadtest"
)

// run is the whole program: parse, measure, print; it returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "explain" {
		return explain(args[1:], stdout, stderr)
	}
	cmd := plainCmd
	if len(args) > 0 {
		for _, c := range []command{gapCmd, holCmd, sweepCmd} {
			if args[0] == strings.TrimPrefix(c.name, "loadtest ") {
				cmd, args = c, args[1:]
				break
			}
		}
	}
	o, err := parseArgs(cmd, args, stderr)
	if err != nil {
		return usageStatus(err)
	}
	if o.version {
		fmt.Fprintln(stdout, "loadtest", version.Get())
		return 0
	}
	started := time.Now()
	var out *outcome
	switch cmd.name {
	case gapCmd.name:
		out, err = runGap(ctx, o)
	case holCmd.name:
		out, err = runHOL(ctx, o)
	case sweepCmd.name:
		out, err = runSweep(ctx, o)
	default:
		out, err = runOne(ctx, o, stderr)
	}
	if err != nil {
		return failed(err, stdout, stderr)
	}
	out.envelope.StartedAt, out.envelope.Version = started.UTC(), version.Get().String()
	return finish(o, out, stdout, stderr)
}

// explain is "loadtest explain KIND FILE...": the sentences on what the
// JSON results in FILEs show (loadtest.Explain); exit status 1 when one of
// their runs had failed requests or a file cannot be read, 2 for a bad
// command line.
func explain(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "Usage: loadtest explain gap NEW_CONNECTION.json KEEP_ALIVE.json\n"+
			"       loadtest explain hol|sweep|storm FILE.json\n"+
			"       loadtest explain engines LABEL=DIR... (each DIR holding "+strings.Join(lesson.EngineFiles[:], ", ")+")")
		return 2
	}
	if err := lesson.Explain(stdout, args[0], args[1:]); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		if errors.Is(err, lesson.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// outcome is what a command measured, ready to print.
type outcome struct {
	report   loadtest.Report        // for -html
	checked  []loadtest.NamedResult // the runs -threshold applies to
	text     func(io.Writer) error  // the text report
	results  func(io.Writer) error  // the results, for -json inside envelope
	envelope loadtest.Envelope      // -json's envelope: kind and settings (run adds the rest)
}

// json writes the versioned JSON form of the outcome: its results inside
// the envelope.
func (out *outcome) json(w io.Writer) error {
	return loadtest.WriteEnvelope(w, out.envelope, out.results)
}

// finish prints the outcome as text or JSON, then the thresholds (on
// stdout after the text report, on stderr with -json), writes the HTML
// report, and returns 3 when a threshold failed.
func finish(o *options, out *outcome, stdout, stderr io.Writer) int {
	checks, held := loadtest.CheckThresholds(o.thresholds, out.checked)
	var err error
	if o.json {
		err = errors.Join(out.json(stdout), loadtest.WriteThresholds(stderr, checks))
	} else {
		err = errors.Join(out.text(stdout), loadtest.WriteThresholds(stdout, checks))
	}
	if err == nil && o.jsonOut != "" {
		err = writeFile(o.jsonOut, out.json)
	}
	if err == nil && o.html != "" {
		out.report.Command = strings.Join(os.Args, " ")
		out.report.Checks = checks
		err = writeFile(o.html, func(w io.Writer) error { return loadtest.WriteHTML(w, &out.report) })
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	if !held {
		return 3
	}
	return 0
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}

// runOne is ab's form: one URL, ab's report.
func runOne(ctx context.Context, o *options, stderr io.Writer) (*outcome, error) {
	o.cfg.URL = o.urls[0]
	o.cfg.Timeline = o.html != ""
	progress(&o.cfg, stderr)
	res, err := loadtest.Run(ctx, o.cfg)
	if res == nil || isAbort(err) {
		return nil, err
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "Finished %d requests\n", res.CompleteRequests)
	}
	runs := []loadtest.NamedResult{{Label: res.DocumentPath, Result: res}}
	return &outcome{
		report:   loadtest.Report{Title: "loadtest " + o.urls[0], Runs: runs},
		checked:  runs,
		text:     func(w io.Writer) error { return loadtest.WriteReport(w, res) },
		results:  func(w io.Writer) error { return loadtest.WriteJSON(w, res) },
		envelope: loadtest.Envelope{Kind: loadtest.KindRun, Settings: loadtest.SettingsOf(o.cfg, o.urls...)},
	}, nil
}

// runGap is the gap scenario.
func runGap(ctx context.Context, o *options) (*outcome, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.GapDefaultWarmup
	}
	o.cfg.Timeline = o.html != ""
	g, err := loadtest.RunGap(ctx, o.cfg, o.urls[0], o.urls[1])
	if err != nil {
		return nil, err
	}
	runs := []loadtest.NamedResult{{Label: "static " + g.Static.DocumentPath, Result: g.Static},
		{Label: "dynamic " + g.Dynamic.DocumentPath, Result: g.Dynamic}}
	return &outcome{
		report:  loadtest.Report{Title: "loadtest gap", Runs: runs},
		checked: runs,
		text: func(w io.Writer) error {
			if o.brief {
				err := loadtest.WriteComparison(w, g, lesson.StateSecrets2002)
				if g.Static.Loop != nil || g.Dynamic.Loop != nil {
					fmt.Fprintf(w, "Server loop (from its metrics)\n")
					err = errors.Join(err, loadtest.WriteLoopTable(w, runs))
				}
				return err
			}
			return errors.Join(loadtest.WriteReport(w, g.Static), loadtest.WriteReport(w, g.Dynamic),
				loadtest.WriteComparison(w, g, lesson.StateSecrets2002))
		},
		results:  func(w io.Writer) error { return loadtest.WriteGapJSON(w, g, lesson.StateSecrets2002) },
		envelope: loadtest.Envelope{Kind: loadtest.KindGap, Settings: loadtest.SettingsOf(o.cfg, o.urls...)},
	}, nil
}

// runHOL is the head-of-line blocking scenario: -rate is the probe's rate,
// -c the load's concurrency, -t each phase's duration (default 5 s).
// Thresholds apply to the probe under load.
func runHOL(ctx context.Context, o *options) (*outcome, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.GapDefaultWarmup
	}
	o.cfg.Timeline = o.html != ""
	probeRate := o.cfg.Rate
	o.cfg.Rate = o.loadRate
	h, err := loadtest.RunHOL(ctx, o.cfg, probeRate, o.urls[0], o.urls[1])
	if err != nil {
		return nil, err
	}
	settings := loadtest.SettingsOf(o.cfg, o.urls...)
	settings.ProbeRate = h.ProbeRate
	return &outcome{
		report:   loadtest.Report{Title: "loadtest hol", HOL: h},
		checked:  []loadtest.NamedResult{{Label: "probe under load", Result: h.UnderLoad}},
		text:     func(w io.Writer) error { return loadtest.WriteHOL(w, h) },
		results:  func(w io.Writer) error { return loadtest.WriteHOLJSON(w, h) },
		envelope: loadtest.Envelope{Kind: loadtest.KindHOL, Settings: settings},
	}, nil
}

// runSweep is the concurrency sweep of each URL. Thresholds apply to
// every step.
func runSweep(ctx context.Context, o *options) (*outcome, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.SweepDefaultWarmup
	}
	settings := loadtest.SettingsOf(o.cfg, o.urls...)
	settings.Levels = o.levels
	out := &outcome{report: loadtest.Report{Title: "loadtest sweep"},
		envelope: loadtest.Envelope{Kind: loadtest.KindSweep, Settings: settings}}
	for _, u := range o.urls {
		s, err := loadtest.RunSweep(ctx, o.cfg, u, o.levels)
		if err != nil {
			return nil, err
		}
		out.report.Sweeps = append(out.report.Sweeps, s)
		for _, st := range s.Steps {
			out.checked = append(out.checked, loadtest.NamedResult{
				Label: fmt.Sprintf("%s -c %d", st.Result.DocumentPath, st.Concurrency), Result: st.Result})
		}
	}
	sweeps := out.report.Sweeps
	out.text = func(w io.Writer) error {
		var err error
		for _, s := range sweeps {
			err = errors.Join(err, loadtest.WriteSweep(w, s))
		}
		return err
	}
	out.results = func(w io.Writer) error { return loadtest.WriteSweepsJSON(w, sweeps) }
	return out, nil
}

// failed reports a run that produced no result, as ab would: its error
// line on stderr and, after an abort, the count completed on stdout.
func failed(err error, stdout, stderr io.Writer) int {
	var abort *loadtest.AbortError
	if errors.As(err, &abort) {
		if abort.Op == "apr_socket_connect()" {
			fmt.Fprintf(stderr, "\nTest aborted after 10 failures\n\n")
		}
		fmt.Fprintln(stderr, abort.Message())
		if abort.Completed > 0 {
			fmt.Fprintf(stdout, "Total of %d requests completed\n", abort.Completed)
		}
		return 1
	}
	fmt.Fprintf(stderr, "%v\n", err)
	return 1
}

// usageStatus is the exit status for a command line that did not parse:
// 0 after -h, 2 otherwise.
func usageStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

func isAbort(err error) bool {
	var abort *loadtest.AbortError
	return errors.As(err, &abort)
}

// progress sets up ab's progress lines on stderr when it is a terminal.
func progress(cfg *loadtest.Config, stderr io.Writer) {
	if !isTerminal(stderr) {
		return
	}
	host := cfg.URL
	if u, err := url.Parse(cfg.URL); err == nil {
		host = u.Hostname()
	}
	fmt.Fprintf(stderr, "Benchmarking %s (be patient)\n", host)
	cfg.Progress = func(n int64) { fmt.Fprintf(stderr, "Completed %d requests\n", n) }
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
