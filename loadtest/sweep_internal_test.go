package loadtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// stepAt is a sweep step of concurrency c at rate requests per second
// with mean and p99 latencies, measured over a second.
func stepAt(c int, rate float64, mean, p99 time.Duration) SweepStep {
	return SweepStep{Concurrency: c, Result: &Result{ConcurrencyLevel: c, TimeTaken: time.Second, CompleteRequests: int64(rate),
		Total: Phase{Mean: mean, Max: p99}, Percentiles: []Percentile{{50, mean}, {99, p99}}}}
}

func TestLittle(t *testing.T) {
	// Ensure Little's L is rate x mean, expected c x (1 - mean / 2 x time),
	// and held within 10%.
	st := stepAt(8, 1000, 8*time.Millisecond, 20*time.Millisecond)
	assert.InDelta(t, 8, st.Little(), 1e-9)
	assert.InDelta(t, 8*(1-0.008/2), st.LittleExpected(), 1e-9)
	assert.True(t, st.LittleHolds())
	idle := stepAt(8, 500, 8*time.Millisecond, 20*time.Millisecond) // the workers waited on the client half the time
	assert.InDelta(t, 4, idle.Little(), 1e-9)
	assert.False(t, idle.LittleHolds())
	none := SweepStep{Concurrency: 2, Result: &Result{}}
	assert.Equal(t, 2.0, none.LittleExpected(), "no time taken: the concurrency")
}

func TestFindKneeRule(t *testing.T) {
	// Ensure the knee is the last step before the first that adds under
	// 10% throughput while p99 grows over 50%, and that either alone is
	// no knee.
	ms := time.Millisecond
	for _, tc := range []struct {
		steps []SweepStep
		want  int
	}{
		{[]SweepStep{stepAt(1, 100, ms, ms), stepAt(2, 200, ms, ms), stepAt(4, 205, 2*ms, 4*ms), stepAt(8, 206, 4*ms, 9*ms)}, 1},
		{[]SweepStep{stepAt(1, 100, ms, ms), stepAt(2, 105, ms, ms)}, -1},
		{[]SweepStep{stepAt(1, 100, ms, ms), stepAt(2, 200, ms, 3*ms)}, -1},
		{[]SweepStep{stepAt(1, 0, ms, ms), stepAt(2, 0, ms, 3*ms)}, -1},
		{nil, -1},
	} {
		assert.Equal(t, tc.want, findKnee(tc.steps))
	}
}

func TestSweepText(t *testing.T) {
	// Ensure a sweep's text marks its knee, names it with its figures,
	// lists the steps where Little's law is off, and says when there is
	// no knee.
	ms := time.Millisecond
	s := &Sweep{URL: "http://h/", Steps: []SweepStep{stepAt(1, 100, ms, ms), stepAt(2, 200, ms, ms), stepAt(4, 205, 2*ms, 4*ms)}}
	for _, st := range s.Steps {
		st.Result.DocumentPath = "/"
	}
	s.Knee = findKnee(s.Steps)
	text := Text(t, Sweeps{s})
	assert.Regexp(t, `(?m)^ *2 +200\.00 .*<- knee`, text)
	assert.Contains(t, text, "Knee at concurrency 2: going to 4 adds +2% throughput while p99 grows +300%.")
	assert.Contains(t, text, "Little's law is off by more than 10% at -c 1, 2, 4")
	s.Knee = -1
	assert.Contains(t, Text(t, Sweeps{s}), "No knee in this sweep")
	assert.Empty(t, Text(t, Sweeps{&Sweep{}}), "a sweep of no step prints nothing")
}
