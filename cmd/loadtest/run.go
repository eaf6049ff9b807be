package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/statesecrets/server/loadtest"
)

// run is the whole program: parse, measure, print; it returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "gap" {
		return runGap(ctx, args[1:], stdout, stderr)
	}
	o, err := parseArgs("loadtest", args, 1, stderr)
	if err != nil {
		return usageStatus(err)
	}
	o.cfg.URL = o.urls[0]
	progress(&o.cfg, stderr)
	res, err := loadtest.Run(ctx, o.cfg)
	if res == nil || isAbort(err) {
		return failed(err, stdout, stderr)
	}
	if isTerminal(stderr) {
		fmt.Fprintf(stderr, "Finished %d requests\n", res.CompleteRequests)
	}
	if o.json {
		err = loadtest.WriteJSON(stdout, res)
	} else {
		err = loadtest.WriteReport(stdout, res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	return 0
}

// runGap is the gap scenario.
func runGap(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs("loadtest gap", args, 2, stderr)
	if err != nil {
		return usageStatus(err)
	}
	if o.cfg.Warmup == 0 {
		o.cfg.Warmup = loadtest.GapDefaultWarmup
	}
	g, err := loadtest.RunGap(ctx, o.cfg, o.urls[0], o.urls[1])
	if err != nil {
		return failed(err, stdout, stderr)
	}
	if o.json {
		err = loadtest.WriteGapJSON(stdout, g, loadtest.StateSecrets2002)
	} else {
		err = errors.Join(loadtest.WriteReport(stdout, g.Static), loadtest.WriteReport(stdout, g.Dynamic),
			loadtest.WriteComparison(stdout, g, loadtest.StateSecrets2002))
	}
	if err != nil {
		fmt.Fprintf(stderr, "loadtest: %v\n", err)
		return 1
	}
	return 0
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
