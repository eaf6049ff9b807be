package gameserver

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLagBuckets(t *testing.T) {
	// Ensure every value falls in a bucket whose bounds hold it, buckets
	// are contiguous, and a bucket spans at most 1/8 of its values.
	for _, us := range []uint64{0, 1, 15, 16, 17, 31, 32, 35, 36, 1000, 50_000, 1 << 40, 1<<64 - 1} {
		i := lagBucket(us)
		require.Less(t, i, lagBuckets, "value %d", us)
		assert.GreaterOrEqual(t, lagUpper(i), us, "value %d", us)
		if i > 0 {
			assert.Less(t, lagUpper(i-1), us, "value %d", us)
		}
	}
	for i := 1; i < lagBuckets; i++ {
		lo := lagUpper(i-1) + 1
		assert.Equal(t, i, lagBucket(lo), "bucket %d starts at %d", i, lo)
		assert.Equal(t, i, lagBucket(lagUpper(i)), "bucket %d ends at %d", i, lagUpper(i))
		if lo >= lagLinear {
			assert.LessOrEqual(t, float64(lagUpper(i)-lo+1), float64(lo)/8+1, "bucket %d", i)
		}
	}
}

func TestLagPercentiles(t *testing.T) {
	// Ensure percentiles are never below the exact order statistic and at
	// most 1/8 above it, never above the maximum, and the mean is exact.
	rng := rand.New(rand.NewPCG(1, 2))
	var h lagHist
	var vals []time.Duration
	var sum time.Duration
	for range 10_000 {
		d := time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
		h.record(d)
		vals = append(vals, d)
		sum += d
	}
	slices.Sort(vals)
	s := h.summary()
	assert.Equal(t, uint64(len(vals)), s.Samples)
	assert.Equal(t, vals[len(vals)-1], s.Max)
	assert.Equal(t, sum/time.Duration(len(vals)), s.Mean)
	for _, q := range []struct {
		got time.Duration
		q   float64
	}{{s.P50, 0.50}, {s.P99, 0.99}} {
		exact := vals[int(q.q*float64(len(vals)))-1]
		assert.GreaterOrEqual(t, q.got, exact.Truncate(time.Microsecond), "q%v", q.q)
		assert.LessOrEqual(t, float64(q.got), float64(exact)*1.125+float64(time.Microsecond), "q%v", q.q)
	}
	assert.LessOrEqual(t, s.P99, s.Max)

	var empty lagHist
	assert.Equal(t, LagStats{}, empty.summary())
	empty.record(-time.Second)
	assert.Equal(t, time.Duration(0), empty.summary().Max, "negative lateness counts as 0")
}

func TestSlowLogRing(t *testing.T) {
	// Ensure the log keeps the last slowLogSize entries, newest first.
	var s slowLog
	assert.Empty(t, s.entries())
	for i := range slowLogSize + 5 {
		s.add(SlowRequest{Duration: time.Duration(i)})
	}
	got := s.entries()
	require.Len(t, got, slowLogSize)
	assert.Equal(t, time.Duration(slowLogSize+4), got[0].Duration)
	assert.Equal(t, time.Duration(5), got[slowLogSize-1].Duration)
	assert.Equal(t, uint64(slowLogSize+5), s.count())
}

func TestLagCounts(t *testing.T) {
	// Ensure the exported histogram counts, at each of LagBuckets, the
	// samples at most that late, cumulatively, and its sum is exact.
	var h lagHist
	for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond,
		80 * time.Millisecond, 20 * time.Second} {
		h.record(d)
	}
	st := h.summary()
	want := map[time.Duration]uint64{
		100 * time.Microsecond: 1, 250 * time.Microsecond: 1, 500 * time.Microsecond: 2, time.Millisecond: 2,
		5 * time.Millisecond: 3, 50 * time.Millisecond: 3, 100 * time.Millisecond: 4, 10 * time.Second: 4,
	}
	for i, bound := range LagBuckets {
		if n, ok := want[bound]; ok {
			assert.Equal(t, n, st.Counts[i], "samples at most %v late", bound)
		}
		if i > 0 {
			assert.GreaterOrEqual(t, st.Counts[i], st.Counts[i-1], "cumulative")
		}
	}
	assert.Equal(t, 20*time.Second+83350*time.Microsecond, st.Sum)
	assert.Equal(t, uint64(5), st.Samples, "the sample over the last bound is counted in Samples only")
}

func TestLagSummaryOnePass(t *testing.T) {
	// Ensure Counts[i] counts exactly the samples whose bucket lies wholly
	// at or under LagBuckets[i], and the percentiles are those percentile
	// finds, whatever the spread of the samples.
	rng := rand.New(rand.NewPCG(3, 4))
	for _, scale := range []time.Duration{time.Microsecond, time.Millisecond, 3 * time.Second} {
		var h lagHist
		var vals []time.Duration
		for range 5_000 {
			d := time.Duration(rng.ExpFloat64() * float64(scale))
			h.record(d)
			vals = append(vals, d)
		}
		s := h.summary()
		for i, b := range LagBuckets {
			var want uint64
			for _, v := range vals {
				if lagUpper(lagBucket(uint64(v/time.Microsecond))) <= uint64(b/time.Microsecond) {
					want++
				}
			}
			assert.Equal(t, want, s.Counts[i], "scale %v, bucket %v", scale, b)
		}
		assert.Equal(t, h.percentile(0.50), s.P50, "scale %v", scale)
		assert.Equal(t, h.percentile(0.99), s.P99, "scale %v", scale)
	}
}
