package loadtest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Output is a scenario's result as Print takes it: its kind, its text
// report, its JSON results, the thresholds checked on it, its section of
// the HTML report and its latency histograms. Measuring stays apart from
// rendering: each kind's figures are plain structs, and these methods only
// read them, as vegeta's reporters read its metrics.
//
// This package's results implement it: *Result (ab's form, kind "run"),
// *Gap ("gap"), *HOL ("hol"), Sweeps ("sweep") and *UsersResult
// ("users"). A new scenario implements it in its own file, beside its
// runner; whatever Print adds (a format, a line every report carries) is
// added once, in Print, for every kind.
type Output interface {
	// kind names the results in the JSON envelope and schema.json.
	kind() string
	// writeText writes the text report (o.Brief: its short form).
	writeText(w io.Writer, o *PrintOptions) error
	// writeResults writes the envelope's results object.
	writeResults(w io.Writer) error
	// check checks ts on the result's runs or steps.
	check(ts []Threshold) []ThresholdCheck
	// writeHTML writes the result's sections of the HTML report.
	writeHTML(p *page)
	// histograms are the result's latency series, for -hgrm and -hlog.
	histograms() []histogram
}

// PrintOptions say how Print prints: what a command's flags asked
// (AddFlags declares the common ones) and what the JSON envelope records.
// The zero value prints the text report on os.Stdout.
type PrintOptions struct {
	// Program prefixes the error lines Print writes on Stderr
	// ("loadtest"); "" means "loadtest".
	Program string
	// Stdout and Stderr default to os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// JSON prints the results in their envelope on Stdout instead of the
	// text report (-json); the thresholds' table then goes to Stderr.
	JSON bool
	// Brief prints the short form of the text where a kind has one (the
	// gap: its comparison table and the loop's figures, not each page's
	// ab report).
	Brief bool
	// Quiet prints neither the text report nor the thresholds' table
	// (only the JSON with JSON, and Summary).
	Quiet bool
	// Thresholds are checked on the result (-threshold); Print returns 3
	// when one fails.
	Thresholds []Threshold
	// JSONOut, when set, is a file that also gets the JSON form
	// (-json-out); HTML a file for the self-contained HTML report
	// (-html); HGRM a file for HdrHistogram's percentile distribution
	// (-hgrm: one file a series, NAME-SERIES.EXT when there are several); HLog a file for
	// HdrHistogram's interval log of the run's seconds or windows (-hlog).
	JSONOut, HTML, HGRM, HLog string
	// Title heads the HTML report; Command is shown under it ("" means
	// the process's command line).
	Title, Command string
	// Scenario names a head-of-line run's scenario in the HTML report's
	// heading of it ("" means "Head-of-line blocking": a login storm is
	// one too, and says so).
	Scenario string
	// Expected are the non-2xx statuses the run expects (a login storm's
	// 403 to a wrong password, 429 from the per-address limit): the HTML
	// report labels them expected where it lists responses by status.
	Expected []int
	// Version, StartedAt and Settings go into the JSON envelope: the
	// program's version, when the run began, and its settings.
	Version   string
	StartedAt time.Time
	Settings  Settings
	// Summary, when set, writes the last lines on Stdout, after
	// everything else, whatever JSON and Quiet say: a command's verdict
	// on the run (cmd/players' capacity line).
	Summary func(w io.Writer) error
}

// AddFlags declares on fs the flags every command that prints a result
// shares: -json, -json-out, -html, -hgrm, -hlog and -threshold, filling o.
func (o *PrintOptions) AddFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print the result as JSON (a versioned envelope, loadtest/schema.json) on stdout instead of the report")
	fs.StringVar(&o.JSONOut, "json-out", "", "also write the -json form of the result to `file`, beside the text report (not in ab)")
	fs.StringVar(&o.HTML, "html", "", "also write a self-contained HTML report with charts to `file` (not in ab)")
	fs.StringVar(&o.HGRM, "hgrm", "", "also write HdrHistogram's percentile distribution (.hgrm, ms) to `file`; a result of several runs or steps\n"+
		"writes one file each, its name before the extension (f-static.hgrm) (not in ab)")
	fs.StringVar(&o.HLog, "hlog", "", "also write an HdrHistogram interval log of the run's seconds (a virtual-user run's windows) to `file`,\n"+
		"values in microseconds, each series tagged with its name (not in ab)")
	fs.Var((*thresholdFlag)(&o.Thresholds), "threshold", "`criterion` such as p99<20ms, rate>1000, errors==0, page.p99<50ms (a step's)\n"+
		"(repeatable; exit 3 when one fails)")
}

// thresholdFlag is the repeatable -threshold flag.
type thresholdFlag []Threshold

func (l *thresholdFlag) String() string { return fmt.Sprint(len(*l), " thresholds") }

func (l *thresholdFlag) Set(v string) error {
	t, err := ParseThreshold(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "threshold "))
	}
	*l = append(*l, t)
	return nil
}

// Print prints out the way o asks and returns the exit status a command
// gives for it: the text report (or the JSON with o.JSON, unless o.Quiet)
// and the thresholds checked (after the text; on Stderr with JSON), then
// the files o names, then o.Summary. It returns 0, 1 when something could
// not be written (its error on Stderr, after the program's name), or 3
// when a threshold failed. It is the one place results are printed: what
// every report carries is added here.
func Print(out Output, o PrintOptions) int {
	o.defaults()
	checks := out.check(o.Thresholds)
	err := o.printMain(out, checks)
	for _, f := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"-json-out", o.JSONOut, func(w io.Writer) error { return writeEnvelope(w, out, &o) }},
		{"-html", o.HTML, func(w io.Writer) error { return writeHTML(w, out, &o, checks) }},
		{"-hlog", o.HLog, func(w io.Writer) error { return writeHLog(w, out.histograms(), o.StartedAt) }},
	} {
		if err == nil && f.path != "" {
			if err = writeFile(f.path, f.write); err != nil {
				err = fmt.Errorf("%s: %w", f.flag, err)
			}
		}
	}
	if err == nil && o.HGRM != "" {
		if err = writeHGRMFiles(o.HGRM, out.histograms()); err != nil {
			err = fmt.Errorf("-hgrm: %w", err)
		}
	}
	if err == nil && o.Summary != nil {
		err = o.Summary(o.Stdout)
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "%s: %v\n", o.Program, err)
		return 1
	}
	for _, c := range checks {
		if !c.OK {
			return 3
		}
	}
	return 0
}

// CheckFiles makes sure Print can create each file o names (JSONOut,
// HTML, HGRM, HLog), so that a bad path fails before a run rather than
// after it: it opens each for writing, creating it if need be, and removes
// those it created. Its error names the flag (-json-out: open ...).
func (o PrintOptions) CheckFiles() error {
	for _, f := range []struct{ flag, path string }{
		{"-json-out", o.JSONOut}, {"-html", o.HTML}, {"-hgrm", o.HGRM}, {"-hlog", o.HLog},
	} {
		if f.path == "" {
			continue
		}
		if err := probeFile(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

// probeFile opens path for writing without truncating it, and removes it
// if it did not exist before.
func probeFile(path string) error {
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		return os.Remove(path)
	}
	return nil
}

func (o *PrintOptions) defaults() {
	if o.Program == "" {
		o.Program = "loadtest"
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Command == "" {
		o.Command = strings.Join(os.Args, " ")
	}
}

// printMain prints the text or the JSON, and the thresholds' table.
func (o *PrintOptions) printMain(out Output, checks []ThresholdCheck) error {
	switch {
	case o.JSON:
		return errors.Join(writeEnvelope(o.Stdout, out, o), writeThresholds(o.Stderr, checks))
	case o.Quiet:
		return nil
	}
	return errors.Join(out.writeText(o.Stdout, o), writeThresholds(o.Stdout, checks))
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}
