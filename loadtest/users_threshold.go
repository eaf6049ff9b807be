package loadtest

import (
	"strconv"
	"time"
)

// steps are the step names t applies to, of those given.
func (t Threshold) steps(names []string) []string {
	if t.Step != "" {
		return []string{t.Step}
	}
	return names
}

// measureStep is t's metric for a step's figures over the run.
func (t Threshold) measureStep(s StepResult) float64 {
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
func (t Threshold) measureWindow(s WindowStep, w *Window) float64 {
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
func (t Threshold) errorsOf(count, errors int64) float64 {
	if !t.Percent {
		return float64(errors)
	}
	if count == 0 {
		return 0
	}
	return 100 * float64(errors) / float64(count)
}

// check checks every threshold on the run's steps (a threshold without a
// step on each, delivery aside; a step that never ran has zero figures).
// Each check's Run is the step's name.
func (r *UsersResult) check(ts []Threshold) []ThresholdCheck {
	var out []ThresholdCheck
	names := make([]string, 0, len(r.Steps))
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	for _, t := range ts {
		for _, name := range t.steps(names) {
			got := t.measureStep(r.Step(name))
			out = append(out, ThresholdCheck{Threshold: t, Run: name, Got: got, OK: t.holds(got)})
		}
	}
	return out
}
