package loadtest

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Threshold is a pass/fail criterion on a run's figures, as k6's
// thresholds: METRIC OP VALUE, for example "p99<20ms", "rate>=1000",
// "errors==0", "errors<1%".
//
// Metrics: a percentage table row (p50 p66 p75 p80 p90 p95 p98 p99 p99.9
// p99.99; corrected under Config.Rate) or max (the longest request, see
// MaxOf), each a latency written with a unit (20ms, 1.5s, 250us) or as a
// bare number of milliseconds; rate, requests per second (ab's); errors,
// failed requests plus non-2xx responses, as a count or, with a trailing
// %, as a percentage of complete requests. Operators: < <= > >= ==.
type Threshold struct {
	Expr    string  // as written
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

// Measure is t's metric for res, in t's unit.
func (t Threshold) Measure(res *Result) float64 {
	switch t.Metric {
	case "max":
		return ms(MaxOf(res))
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
	return ms(PercentileOf(res, p))
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

// NamedResult is a Result with the label a report gives it.
type NamedResult struct {
	Label  string
	Result *Result
}

// ThresholdCheck is one threshold checked on one run.
type ThresholdCheck struct {
	Threshold Threshold
	Run       string  // the run's label
	Got       float64 // the measured value, in the threshold's unit
	OK        bool
}

// CheckThresholds checks every threshold on every run and reports whether
// all held.
func CheckThresholds(ts []Threshold, runs []NamedResult) ([]ThresholdCheck, bool) {
	var out []ThresholdCheck
	all := true
	for _, r := range runs {
		for _, t := range ts {
			got := t.Measure(r.Result)
			c := ThresholdCheck{Threshold: t, Run: r.Label, Got: got, OK: t.holds(got)}
			all = all && c.OK
			out = append(out, c)
		}
	}
	return out, all
}

// WriteThresholds writes the checks as a table, each failed one marked
// FAILED, and a last line saying how many failed.
func WriteThresholds(out io.Writer, checks []ThresholdCheck) error {
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
	case t.Metric == "rate":
		return fmt.Sprintf("%.2f req/s", v)
	case t.Metric == "errors" && t.Percent:
		return fmt.Sprintf("%.3f%%", v)
	case t.Metric == "errors":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
