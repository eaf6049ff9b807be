package loadtest

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microseconds (ab's unit) from 0 to an hour, three
// significant digits, so a value read back is off by at most 0.1%. Longer
// values are recorded as an hour; their exact maximum is kept apart.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// phase accumulates one of ab's Connection Times rows in constant memory:
// exact count, sum, min and max, Welford's running mean and sum of squared
// deviations for the sample standard deviation, and a histogram for the
// median and percentiles. Values are microseconds, ab's unit.
type phase struct {
	count    int64
	sum      int64
	min, max int64
	mean, m2 float64 // Welford's running mean and sum of squares of deviations
	hist     *hdrhistogram.Histogram
}

func newPhase() *phase {
	return &phase{min: math.MaxInt64, hist: hdrhistogram.New(histLowest, histHighest, histDigits)}
}

// record adds one value in microseconds; negative values count as 0, as
// ab's ap_max(0, ...).
func (p *phase) record(us int64) {
	us = max(us, 0)
	p.count++
	p.sum += us
	p.min = min(p.min, us)
	p.max = max(p.max, us)
	d := float64(us) - p.mean
	p.mean += d / float64(p.count)
	p.m2 += d * (float64(us) - p.mean)
	_ = p.hist.RecordValue(min(us, histHighest))
}

// merge adds q's values to p (Chan et al.'s pairwise update for the
// variance).
func (p *phase) merge(q *phase) {
	if q.count == 0 {
		return
	}
	n := p.count + q.count
	d := q.mean - p.mean
	p.m2 += q.m2 + d*d*float64(p.count)*float64(q.count)/float64(n)
	p.mean += d * float64(q.count) / float64(n)
	p.count, p.sum = n, p.sum+q.sum
	p.min, p.max = min(p.min, q.min), max(p.max, q.max)
	p.hist.Merge(q.hist)
}

// sd is the sample standard deviation in microseconds (divided by n-1, as
// ab's), 0 for fewer than two values.
func (p *phase) sd() float64 {
	if p.count < 2 {
		return 0
	}
	return math.Sqrt(p.m2 / float64(p.count-1))
}

// at returns the value ab would find at index i (0-based) of its sorted
// array, read from the histogram and kept within the exact min and max.
func (p *phase) at(i int64) int64 {
	if p.count == 0 {
		return 0
	}
	i = min(max(i, 0), p.count-1)
	if i == p.count-1 {
		return p.max
	}
	// ValueAtPercentile(q) returns the value of rank int(q/100*count+0.5);
	// q = 100*(i+1)/count lands that rank on i+1 despite rounding.
	v := p.hist.ValueAtPercentile(100 * float64(i+1) / float64(p.count))
	return min(max(v, p.min), p.max)
}

// median is ab's median: for an odd count above one, the mean of the
// values at indexes count/2 and count/2+1 of the sorted array (ab averages
// the element after the middle, not before); otherwise the value at
// count/2.
func (p *phase) median() int64 {
	n := p.count
	if n > 1 && n%2 == 1 {
		return (p.at(n/2) + p.at(n/2+1)) / 2
	}
	return p.at(n / 2)
}

// percentile is ab's percentile: the value at index count*permyriad/10000
// of the sorted array (integer division), the maximum for 100%.
func (p *phase) percentile(permyriad int64) int64 {
	if permyriad >= 10000 {
		return p.max
	}
	return p.at(p.count * permyriad / 10000)
}

// figures reduces p to the figures a Result reports.
func (p *phase) figures() Phase {
	if p.count == 0 {
		return Phase{}
	}
	return Phase{
		Min:    usec(p.min),
		Mean:   time.Duration(float64(p.sum) * 1000 / float64(p.count)),
		SD:     time.Duration(p.sd() * 1000),
		Median: usec(p.median()),
		Max:    usec(p.max),
	}
}

func usec(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
