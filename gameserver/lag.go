package gameserver

import (
	"math/bits"
	"time"
)

// DefaultLagResolution is the period of the loop-lag timer when
// Config.LagResolution is 0: 10 ms, as Node's monitorEventLoopDelay.
const DefaultLagResolution = 10 * time.Millisecond

// LagStats summarizes loop lag: how late a timer armed every
// Config.LagResolution fired, as Node's monitorEventLoopDelay measures it.
// A timer fires late when the loop is busy (a long handler, a large write)
// when it comes due, so lag is what a client arriving at a random moment
// waits before the loop looks at it. Percentiles are the upper bound of
// their histogram bucket (at most 1/8 above the true value, never below it,
// and never above Max). All zero while no sample was taken.
type LagStats struct {
	Samples uint64        // timer firings measured
	Mean    time.Duration // mean lateness
	P50     time.Duration // median lateness
	P99     time.Duration // 99th percentile
	Max     time.Duration // the latest firing
	Sum     time.Duration // total lateness of all samples

	// Counts is the histogram for exporters (a Prometheus histogram's
	// cumulative buckets): Counts[i] is how many samples were at most
	// LagBuckets[i] late, counting the samples of each internal bucket
	// that lies wholly at or under the bound (so within 1/8 of it).
	// Subtracting two snapshots gives the histogram of the samples taken
	// between them.
	Counts [len(LagBuckets)]uint64
}

// LagBuckets are the upper bounds of LagStats.Counts.
var LagBuckets = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Lag histogram layout: HdrHistogram's log-linear shape with 8 linear
// sub-buckets per power of two, in microseconds. Values under lagLinear µs
// have a bucket each; above, a bucket spans 1/8 of its power of two.
const (
	lagSubBits = 3
	lagLinear  = 2 << lagSubBits                  // 16
	lagBuckets = lagLinear + (64-lagSubBits-1)<<3 // every uint64 fits
)

// lagHist is a histogram of lateness samples. Only the loop touches it.
type lagHist struct {
	counts [lagBuckets]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

// lagBucket returns the bucket index of a value in microseconds.
func lagBucket(us uint64) int {
	if us < lagLinear {
		return int(us)
	}
	e := bits.Len64(us) - lagSubBits - 1 // shift that leaves the top 4 bits
	return lagLinear + (e-1)<<lagSubBits + int(us>>e) - 1<<lagSubBits
}

// lagUpper returns the largest value, in microseconds, of bucket i.
func lagUpper(i int) uint64 {
	if i < lagLinear {
		return uint64(i)
	}
	e := (i-lagLinear)>>lagSubBits + 1
	sub := uint64((i-lagLinear)&(1<<lagSubBits-1) + 1<<lagSubBits)
	return (sub+1)<<e - 1
}

// record adds one sample; negative values count as 0.
func (h *lagHist) record(d time.Duration) {
	d = max(d, 0)
	h.counts[lagBucket(uint64(d/time.Microsecond))]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// percentile returns the upper bound of the bucket holding the q-quantile
// (0 < q <= 1), capped at the maximum.
func (h *lagHist) percentile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := h.rank(q)
	var seen uint64
	for i, n := range h.counts {
		seen += n
		if seen >= rank {
			return min(time.Duration(lagUpper(i)+1)*time.Microsecond-1, h.max)
		}
	}
	return h.max
}

// summary returns the figures for Stats, in one pass over the buckets up
// to the highest one used: the loop summarizes several histograms at a
// time (WaitStats's, by route).
func (h *lagHist) summary() LagStats {
	if h.n == 0 {
		return LagStats{}
	}
	st := LagStats{Samples: h.n, Mean: h.sum / time.Duration(h.n), Max: h.max, Sum: h.sum}
	r50, r99 := h.rank(0.50), h.rank(0.99)
	var seen uint64
	b := 0
	for i := 0; i < len(h.counts) && seen < h.n; i++ {
		for b < len(LagBuckets) && lagUpper(i) > lagBoundsUS[b] {
			st.Counts[b] = seen
			b++
		}
		n := h.counts[i]
		if n == 0 {
			continue
		}
		upper := min(time.Duration(lagUpper(i)+1)*time.Microsecond-1, h.max)
		if seen < r50 && seen+n >= r50 {
			st.P50 = upper
		}
		if seen < r99 && seen+n >= r99 {
			st.P99 = upper
		}
		seen += n
	}
	for ; b < len(LagBuckets); b++ {
		st.Counts[b] = seen
	}
	return st
}

// rank is the rank of the q-quantile among h's samples, from 1.
func (h *lagHist) rank(q float64) uint64 {
	return min(max(uint64(q*float64(h.n)+0.999999), 1), h.n)
}

// lagBoundsUS are LagBuckets in microseconds.
var lagBoundsUS = func() (us [len(LagBuckets)]uint64) {
	for i, b := range LagBuckets {
		us[i] = uint64(b / time.Microsecond)
	}
	return us
}()

// lagMonitor is the loop-lag timer: it fires every period and records how
// late it fired. Only the loop touches it.
type lagMonitor struct {
	hist lagHist
	sum  LagStats // hist.summary() as of the last sample, for publish

	// turns is the histogram of loop turn durations (endTurn records
	// each), summarized with each lag sample into turnSum, so a turn costs
	// one bucket increment and publishing copies a ready summary.
	turns   lagHist
	turnSum LagStats
}

// startLag arms the lag timer, unless period is negative (off). It runs on
// the loop as the loop starts. The timer is an ordinary Every timer, so
// Shutdown stops it with the others.
func (l *loop) startLag(period time.Duration) {
	if period < 0 {
		return
	}
	m := &l.lag
	t := &Timer{l: l}
	t.f = func() {
		m.hist.record(time.Duration(l.clock() - t.t.when))
		m.sum = m.hist.summary()
		m.turnSum = m.turns.summary()
	}
	t.t = timer{when: l.clock() + int64(period), period: int64(period), index: -1, user: t}
	l.schedule(&t.t)
}
