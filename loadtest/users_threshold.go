package loadtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StepThreshold is a Threshold on one step of a virtual-user run:
// STEP.METRIC OP VALUE, as k6's thresholds on a tag: "hq.p99<50ms",
// "order.errors==0", "delivery.p99<1s" (DeliveryStep). Without "STEP."
// it applies to every step but delivery. METRIC is a Threshold's: a
// percentile row, max, rate (the step's per second) or errors (a count,
// or with % a percentage of the step's count). Step names hold no dot.
type StepThreshold struct {
	Step string // "" for every step
	Threshold
}

// ParseStepThreshold parses s (see StepThreshold); the error names what
// is wrong.
func ParseStepThreshold(s string) (StepThreshold, error) {
	var st StepThreshold
	expr := strings.TrimSpace(s)
	if i := strings.IndexAny(expr, "<>="); i > 0 {
		left := strings.ToLower(strings.TrimSpace(expr[:i]))
		if step, metric, ok := strings.Cut(expr[:i], "."); ok && !isPercentileMetric(left) {
			st.Step = strings.TrimSpace(step)
			expr = metric + expr[i:]
		}
	}
	t, err := ParseThreshold(expr)
	if err != nil {
		return st, fmt.Errorf("threshold %q: %w", s, err)
	}
	t.Expr = s
	st.Threshold = t
	return st, nil
}

// steps are the step names t applies to, of those given.
func (t StepThreshold) steps(names []string) []string {
	if t.Step != "" {
		return []string{t.Step}
	}
	return names
}

// measureStep is t's metric for a step's figures over the run.
func (t StepThreshold) measureStep(s StepResult) float64 {
	switch t.Metric {
	case "max":
		return ms(s.Latency.Max)
	case "rate":
		return s.Rate
	case "errors":
		return t.errorsOf(s.Count, s.Errors)
	}
	p, _ := strconv.ParseFloat(t.Metric[1:], 64)
	for _, q := range s.Percentiles {
		if q.Percent == p {
			return ms(q.Latency)
		}
	}
	return ms(s.Latency.Max) // fewer than two values: the one there is
}

// measureWindow is t's metric for a step's figures in window w: of the
// percentiles, p50, p90, p99 and p99.9 are kept per window; another reads
// the next kept one above it (p95: p99).
func (t StepThreshold) measureWindow(s WindowStep, w *Window) float64 {
	switch t.Metric {
	case "max":
		return ms(s.Max)
	case "rate":
		return float64(s.Count) / max(w.duration().Seconds(), 1e-9)
	case "errors":
		return t.errorsOf(s.Count, s.Errors)
	}
	p, _ := strconv.ParseFloat(t.Metric[1:], 64)
	switch {
	case p <= 50:
		return ms(s.P50)
	case p <= 90:
		return ms(s.P90)
	case p <= 99:
		return ms(s.P99)
	case p <= 99.9:
		return ms(s.P999)
	}
	return ms(s.Max)
}

// duration is the window's length.
func (w *Window) duration() time.Duration { return w.Length }

// errorsOf is the errors metric for errors out of count.
func (t StepThreshold) errorsOf(count, errors int64) float64 {
	if !t.Percent {
		return float64(errors)
	}
	if count == 0 {
		return 0
	}
	return 100 * float64(errors) / float64(count)
}

// CheckStepThresholds checks every threshold on the run's steps (a
// threshold without a step on each, delivery aside) and reports whether
// all held. Each check's Run is the step's name.
func CheckStepThresholds(ts []StepThreshold, res *UsersResult) ([]ThresholdCheck, bool) {
	var out []ThresholdCheck
	all := true
	names := make([]string, 0, len(res.Steps))
	for _, s := range res.Steps {
		names = append(names, s.Name)
	}
	for _, t := range ts {
		for _, name := range t.steps(names) {
			got := t.measureStep(res.Step(name))
			c := ThresholdCheck{Threshold: t.Threshold, Run: name, Got: got, OK: t.holds(got)}
			all = all && c.OK
			out = append(out, c)
		}
	}
	return out, all
}
