package lesson

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Spread is one figure measured over interleaved repeats of a run: its
// median and its range. On a shared machine one run's figure says little;
// the median says what is typical and the range how far the machine moved
// it, and two figures are told apart only when their ranges do not
// overlap (see Compare).
type Spread struct {
	Median, Min, Max float64
	N                int // how many repeats
}

// SpreadOf is the spread of xs; the zero Spread for none.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Overlaps reports whether s's range and t's share a value.
func (s Spread) Overlaps(t Spread) bool { return s.Min <= t.Max && t.Min <= s.Max }

// Format is the spread with f formatting each number: "45.2 [43.0-52.1]",
// or the one value for a single repeat.
func (s Spread) Format(f func(float64) string) string {
	if s.N <= 1 || s.Min == s.Max {
		return f(s.Median)
	}
	return fmt.Sprintf("%s [%s-%s]", f(s.Median), f(s.Min), f(s.Max))
}

// Figure formats a spread's numbers for a sentence.
type Figure func(float64) string

// The usual figures: a number with this many decimals and a unit.
var (
	// Ms is milliseconds with two decimals: "3.84 ms".
	Ms Figure = func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }
	// Us is microseconds with one decimal, "45.2 us", or from 1 ms up
	// milliseconds with two, "9.80 ms".
	Us Figure = func(v float64) string {
		if v >= 1000 {
			return Ms(v / 1000)
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " us"
	}
	// PerSecond is a whole rate: "8992 req/s".
	PerSecond Figure = func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " req/s" }
	// Times is a ratio: "1.85x".
	Times Figure = func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "x" }
)

// Wait is a latency in milliseconds written in seconds from one second up
// ("1.21 s") and in milliseconds below ("6.20 ms"), so a worst wait reads
// at its own scale.
var Wait Figure = func(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
	}
	return Ms(v)
}

// Compare is the sentence that sets figure what of a (named aLabel)
// beside b's, each over its repeats, with f formatting the values:
// "What: A 20.00 ms [19.00 ms-26.00 ms] against B 4.00 ms [...], 5.00x, a
// measured difference (...)". It never reads more into the figures than
// they hold:
//   - when the ranges overlap, it says the two are not distinguishable on
//     this machine, whatever their medians;
//   - when they do not, it gives the ratio of the medians as a measured
//     difference, never as the machine's noise;
//   - a ratio below 1 (a is the lower) says so in words of its own rather
//     than printing "0.85x" bare.
func Compare(what, aLabel string, a Spread, bLabel string, b Spread, f Figure) string {
	r := math.Inf(1)
	switch {
	case b.Median > 0:
		r = a.Median / b.Median
	case a.Median <= 0:
		r = 1
	}
	head := fmt.Sprintf("%s: %s %s against %s %s", capitalize(what), aLabel, a.Format(f), bLabel, b.Format(f))
	repeats := fmt.Sprintf("the ranges over %d and %d repeats", a.N, b.N)
	switch {
	case a.Overlaps(b):
		return fmt.Sprintf("%s: not distinguishable on this machine (%s overlap; the medians differ %s).",
			head, repeats, Times(max(r, 1/r)))
	case r >= 1:
		return fmt.Sprintf("%s, %s, a measured difference (%s do not overlap).", head, timesText(r), repeats)
	default:
		return fmt.Sprintf("%s, %s: a ratio below 1, %s was the lower here, a measured difference (%s do not overlap).",
			head, Times(r), aLabel, repeats)
	}
}

// timesText is "5.00x" for a ratio, "more" when b was 0.
func timesText(r float64) string {
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return "more than any multiple"
	}
	return Times(r)
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// P99Text is a p99 of n responses formatted by f, or "n/a (k
// responses)" when n is under MinP99Samples: from fewer, the 99th
// percentile is the worst response or next to it, not a percentile.
func P99Text(v float64, n int64, f Figure) string {
	if n < MinP99Samples {
		return fmt.Sprintf("n/a (%d responses)", n)
	}
	return f(v)
}
