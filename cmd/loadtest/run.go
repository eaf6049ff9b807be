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
	if err := o.print.CheckFiles(); err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	closeLog, err := o.openRequestLog()
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	o.print.StartedAt, o.print.Version = time.Now(), version.Get().String()
	o.print.Stdout, o.print.Stderr, o.print.Title = stdout, stderr, "loadtest"
	out, err := measure(ctx, cmd, o, stderr)
	if err = errors.Join(err, closeLog()); err != nil {
		return failed(err, stdout, stderr)
	}
	if o.title != "" {
		o.print.Title, o.print.Scenario = o.title, o.title
	}
	return loadtest.Print(out, o.print)
}

// measure runs cmd's scenario.
func measure(ctx context.Context, cmd command, o *options, stderr io.Writer) (loadtest.Output, error) {
	o.cfg.Timeline = o.print.HTML != "" || o.print.HLog != ""
	switch cmd.name {
	case gapCmd.name:
		return runGap(ctx, o)
	case holCmd.name:
		return runHOL(ctx, o)
	case sweepCmd.name:
		return runSweep(ctx, o)
	}
	return runOne(ctx, o, stderr)
}

// openRequestLog opens -out's file for the run's request log; the
// returned close closes it.
func (o *options) openRequestLog() (func() error, error) {
	if o.out == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(o.out)
	if err != nil {
		return nil, fmt.Errorf("-out: %w", err)
	}
	o.cfg.RequestLog = f
	return f.Close, nil
}

// explain is "loadtest explain KIND FILE...": the sentences on what the
// JSON results in FILEs show (loadtest.Explain); exit status 1 when one of
// their runs had failed requests or a file cannot be read, 2 for a bad
// command line.
func explain(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "Usage: loadtest explain [-machine quiet|busy|saturated] KIND ...\n"+
			"       loadtest explain gap NEW_CONNECTION.json KEEP_ALIVE.json\n"+
			"       loadtest explain hol|sweep|storm FILE.json\n"+
			"       loadtest explain machine PROBE.json...\n"+
			"       loadtest explain -machine busy hol-scale RATE SECONDS PROBE_RATE PAGE.json [PROBE.json]\n"+
			"       loadtest explain engines LABEL=DIR... (each DIR holding "+strings.Join(lesson.EngineFiles[:], ", ")+")")
		return 2
	}
	machine := lesson.Quiet
	if len(args) > 2 && args[0] == "-machine" {
		switch v := lesson.Verdict(args[1]); v {
		case lesson.Quiet, lesson.Busy, lesson.Saturated:
			machine, args = v, args[2:]
		default:
			fmt.Fprintf(stderr, "loadtest: explain: -machine %q: want quiet, busy or saturated\n", args[1])
			return 2
		}
	}
	if err := lesson.ExplainOn(stdout, machine, args[0], args[1:]); err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		if errors.Is(err, lesson.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// runOne is ab's form: one URL, ab's report.
func runOne(ctx context.Context, o *options, stderr io.Writer) (loadtest.Output, error) {
	o.cfg.URL = o.urls[0]
	o.print.Title = "loadtest " + o.urls[0]
	progress(&o.cfg, stderr)
	o.print.Settings = loadtest.SettingsOf(o.cfg, o.urls...)
	res, err := loadtest.Run(ctx, o.cfg)
	if res == nil || isAbort(err) || (err != nil && ctx.Err() == nil) {
		return nil, err
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "Finished %d requests\n", res.CompleteRequests)
	}
	return res, nil
}

// runGap is the gap scenario, beside the 2002 figures.
func runGap(ctx context.Context, o *options) (loadtest.Output, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.GapDefaultWarmup
	}
	o.print.Title = "loadtest gap"
	o.print.Settings = loadtest.SettingsOf(o.cfg, o.urls...)
	g, err := loadtest.RunGap(ctx, o.cfg, o.urls[0], o.urls[1])
	if err != nil {
		return nil, err
	}
	g.Reference = &lesson.StateSecrets2002
	return g, nil
}

// runHOL is the head-of-line blocking scenario: -rate is the probe's rate,
// -c the load's concurrency, -t each phase's duration (default 5 s).
// Thresholds apply to the probe under load.
func runHOL(ctx context.Context, o *options) (loadtest.Output, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.GapDefaultWarmup
	}
	o.print.Title = "loadtest hol"
	probeRate := o.cfg.Rate
	o.cfg.Rate = o.loadRate
	o.print.Settings = loadtest.SettingsOf(o.cfg, o.urls...)
	h, err := loadtest.RunHOL(ctx, o.cfg, probeRate, o.urls[0], o.urls[1])
	if err != nil {
		return nil, err
	}
	o.print.Settings.ProbeRate = h.ProbeRate
	return h, nil
}

// runSweep is the concurrency sweep of each URL. Thresholds apply to
// every step.
func runSweep(ctx context.Context, o *options) (loadtest.Output, error) {
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.SweepDefaultWarmup
	}
	o.print.Title = "loadtest sweep"
	o.print.Settings = loadtest.SettingsOf(o.cfg, o.urls...)
	o.print.Settings.Levels = o.levels
	var out loadtest.Sweeps
	for _, u := range o.urls {
		s, err := loadtest.RunSweep(ctx, o.cfg, u, o.levels)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
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
