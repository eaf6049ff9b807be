package loadtest

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Threshold is a pass/fail criterion on a run's figures, as k6's
// thresholds: [STEP.]METRIC OP VALUE, for example "p99<20ms",
// "rate>=1000", "errors==0", "errors<1%", or on one step of a
// virtual-user run "hq.p99<50ms", "delivery.p99<1s" (DeliveryStep).
// Without "STEP." it applies to every run a result checks (every step of
// a virtual-user run but delivery); with it, to the run or step of that
// name only (a virtual-user run's steps; in ab's forms the runs' labels
// hold no such names, and the check fails saying so). Step names hold no
// dot.
//
// Metrics: a percentage table row (p50 p66 p75 p80 p90 p95 p98 p99 p99.9
// p99.99; corrected under Config.Rate) or max (the longest request, see
// maxOf), each a latency written with a unit (20ms, 1.5s, 250us) or as a
// bare number of milliseconds; rate, requests per second (ab's); errors,
// failed requests plus non-2xx responses, as a count or, with a trailing
// %, as a percentage of complete requests. Operators: < <= > >= ==.
type Threshold struct {
	Expr    string  // as written
	Step    string  // the step it names, "" for every run
	Metric  string  // "p99", "max", "rate", "errors"
	Op      string  // "<", "<=", ">", ">=", "=="
	Value   float64 // milliseconds for latencies, req/s, a count or a percentage
	Percent bool    // errors as a percentage of complete requests
}

// thresholdOps are the operators, two-character ones first so that "<="
// is not read as "<".
var thresholdOps = []string{"<=", ">=", "==", "<", ">"}

// ParseThreshold parses s (see Threshold); the error says what is wrong.
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Expr: s}
	expr := strings.ReplaceAll(s, " ", "")
	if i := strings.IndexAny(expr, "<>="); i > 0 {
		left := strings.ToLower(expr[:i])
		if step, metric, ok := strings.Cut(expr[:i], "."); ok && !isPercentileMetric(left) {
			t.Step, expr = step, metric+expr[i:]
		}
	}
	var value string
	for _, op := range thresholdOps {
		if m, v, ok := strings.Cut(expr, op); ok {
			t.Metric, t.Op, value = strings.ToLower(m), op, v
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("threshold %q: want METRIC OP VALUE, e.g. p99<20ms (operators < <= > >= ==)", s)
	}
	var err error
	switch {
	case t.Metric == "max" || isPercentileMetric(t.Metric):
		t.Value, err = parseLatencyMS(value)
	case t.Metric == "rate":
		t.Value, err = strconv.ParseFloat(strings.TrimSuffix(value, "/s"), 64)
	case t.Metric == "errors":
		v, pct := strings.CutSuffix(value, "%")
		t.Percent = pct
		t.Value, err = strconv.ParseFloat(v, 64)
	default:
		return t, fmt.Errorf("threshold %q: unknown metric %q: want p50, p90, p99, p99.9 (a percentage row), max, rate or errors", s, t.Metric)
	}
	if err != nil || t.Value < 0 {
		return t, fmt.Errorf("threshold %q: bad value %q for %s", s, value, t.Metric)
	}
	return t, nil
}

// isPercentileMetric reports whether m names a row of the percentage
// table: "p" then its percent.
func isPercentileMetric(m string) bool {
	p, ok := strings.CutPrefix(m, "p")
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(p, 64)
	if err != nil {
		return false
	}
	for _, pm := range percentiles {
		if float64(pm)/100 == f && pm < 10000 {
			return true
		}
	}
	return false
}

// parseLatencyMS reads "20ms", "1.5s", "250us" or a bare "20" (ms) as
// milliseconds.
func parseLatencyMS(v string) (float64, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("bad latency")
	}
	return ms(d), nil
}

// measure is t's metric for res, in t's unit.
func (t Threshold) measure(res *Result) float64 {
	switch t.Metric {
	case "max":
		return ms(longestOf(res))
	case "rate":
		return res.RequestsPerSecond()
	case "errors":
		n := float64(errorCount(res))
		if t.Percent {
			if res.CompleteRequests == 0 {
				return 0
			}
			return 100 * n / float64(res.CompleteRequests)
		}
		return n
	}
	p, _ := strconv.ParseFloat(t.Metric[1:], 64)
	return ms(percentileOf(res, p))
}

// holds reports whether got satisfies t.
func (t Threshold) holds(got float64) bool {
	switch t.Op {
	case "<":
		return got < t.Value
	case "<=":
		return got <= t.Value
	case ">":
		return got > t.Value
	case ">=":
		return got >= t.Value
	}
	return got == t.Value
}

// namedResult is a Result with the label a report gives it.
type namedResult struct {
	Label  string
	Result *Result
}

// ThresholdCheck is one threshold checked on one run (or step).
type ThresholdCheck struct {
	Threshold Threshold
	Run       string  // the run's label, or the step's name
	Got       float64 // the measured value, in the threshold's unit; NaN when there was nothing to measure
	OK        bool
}

// checkRuns checks every threshold on every run: one without a step on
// each, one with a step fails, for runs of ab's form have none.
func checkRuns(ts []Threshold, runs []namedResult) []ThresholdCheck {
	var out []ThresholdCheck
	for _, t := range ts {
		if t.Step != "" {
			out = append(out, ThresholdCheck{Threshold: t, Run: t.Step, Got: math.NaN()})
			continue
		}
		for _, r := range runs {
			got := t.measure(r.Result)
			out = append(out, ThresholdCheck{Threshold: t, Run: r.Label, Got: got, OK: t.holds(got)})
		}
	}
	return out
}

// writeThresholds writes the checks as a table, each failed one marked
// FAILED, and a last line saying how many failed.
func writeThresholds(out io.Writer, checks []ThresholdCheck) error {
	if len(checks) == 0 {
		return nil
	}
	fmt.Fprintf(out, "\nThresholds\n")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "run\tthreshold\tmeasured\tresult")
	failed := 0
	for _, c := range checks {
		mark := "ok"
		if !c.OK {
			mark, failed = "FAILED", failed+1
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Run, c.Threshold.Expr, c.Threshold.unitValue(c.Got), mark)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(out, "%d of %d thresholds FAILED\n", failed, len(checks))
	} else {
		fmt.Fprintf(out, "all %d thresholds held\n", len(checks))
	}
	return nil
}

// unitValue prints a measured value with t's unit.
func (t Threshold) unitValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "no step " + t.Step

	case t.Metric == "rate":
		return fmt.Sprintf("%.2f req/s", v)
	case t.Metric == "errors" && t.Percent:
		return fmt.Sprintf("%.3f%%", v)
	case t.Metric == "errors":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
