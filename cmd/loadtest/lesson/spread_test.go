package lesson_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
)

func TestSpreadOf(t *testing.T) {
	// Ensure a spread is the median and the range of its repeats, in any order.
	assert.Equal(t, lesson.Spread{Median: 3, Min: 1, Max: 9, N: 3}, lesson.SpreadOf([]float64{9, 1, 3}))
	assert.Equal(t, lesson.Spread{Median: 2.5, Min: 1, Max: 4, N: 4}, lesson.SpreadOf([]float64{4, 1, 2, 3}))
	assert.Equal(t, lesson.Spread{}, lesson.SpreadOf(nil))
	assert.Equal(t, "3.00 ms [1.00 ms-9.00 ms]", lesson.SpreadOf([]float64{9, 1, 3}).Format(lesson.Ms))
	assert.Equal(t, "1.21 s", lesson.Wait(1210))
	assert.Equal(t, "6.20 ms", lesson.Wait(6.2))
}

func TestCompare(t *testing.T) {
	t.Run("Measured", func(t *testing.T) {
		// Ensure a measured 5x, ranges apart, is given as a measured
		// difference and never called noise or put down to the machine.
		s := lesson.Compare("the probe's p99 under load", "without the cache", lesson.SpreadOf([]float64{19, 20, 26}),
			"alone", lesson.SpreadOf([]float64{3.5, 4, 4.8}), lesson.Ms)
		assert.Equal(t, "The probe's p99 under load: without the cache 20.00 ms [19.00 ms-26.00 ms] against alone 4.00 ms [3.50 ms-4.80 ms], "+
			"5.00x, a measured difference (the ranges over 3 and 3 repeats do not overlap).", s)
		for _, excuse := range []string{"not distinguishable", "noise", "other load", "machine"} {
			assert.NotContains(t, s, excuse)
		}
	})
	t.Run("Overlapping", func(t *testing.T) {
		// Ensure overlapping ranges are called indistinguishable, whatever the medians.
		s := lesson.Compare("server CPU per request", "net/http", lesson.SpreadOf([]float64{40, 52, 70}),
			"the loop", lesson.SpreadOf([]float64{38, 45, 55}), lesson.Us)
		assert.Contains(t, s, "Server CPU per request: net/http 52.0 us [40.0 us-70.0 us] against the loop 45.0 us [38.0 us-55.0 us]: "+
			"not distinguishable on this machine (the ranges over 3 and 3 repeats overlap; the medians differ 1.16x).")
		assert.NotContains(t, s, "measured difference")
	})
	t.Run("BelowOne", func(t *testing.T) {
		// Ensure a ratio below 1 has its own sentence, naming who was higher.
		s := lesson.Compare("the static page's rate", "net/http", lesson.SpreadOf([]float64{17000, 17600, 18000}),
			"the loop", lesson.SpreadOf([]float64{20000, 20700, 23000}), lesson.PerSecond)
		assert.Contains(t, s, "against the loop 20700 req/s [20000 req/s-23000 req/s], 0.85x: a ratio below 1, net/http was the lower here, a measured difference")
		assert.NotContains(t, s, "not distinguishable")
	})
}
