package loadtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func phaseOf(values ...int64) *phase {
	p := newPhase()
	for _, v := range values {
		p.record(v)
	}
	return p
}

func TestPhaseFigures(t *testing.T) {
	t.Run("Odd", func(t *testing.T) {
		// Ensure mean, sample sd (n-1) and ab's odd-count median (the mean of
		// the elements at count/2 and count/2+1) match hand-computed values:
		// mean 2000/5 = 400; squared deviations 90000+40000+10000+0+360000
		// over 4 = 125000, sd 353.553; median (300+400)/2 = 350.
		p := phaseOf(1000, 100, 300, 200, 400)
		f := p.figures()
		assert.Equal(t, 100*time.Microsecond, f.Min)
		assert.Equal(t, 1000*time.Microsecond, f.Max)
		assert.Equal(t, 400*time.Microsecond, f.Mean)
		assert.InDelta(t, 353.553, p.sd(), 0.001)
		assert.Equal(t, 350*time.Microsecond, f.Median)
	})
	t.Run("Even", func(t *testing.T) {
		// Ensure an even count's median is the element at count/2 (the upper
		// middle), as ab takes it.
		assert.Equal(t, int64(300), phaseOf(100, 200, 300, 400).median())
	})
	t.Run("One", func(t *testing.T) {
		// Ensure one value has sd 0, not NaN.
		p := phaseOf(7)
		assert.Equal(t, int64(7), p.median())
		assert.Zero(t, p.sd())
	})
	t.Run("Negative", func(t *testing.T) {
		// Ensure a negative interval counts as 0, as ab's ap_max(0, ...).
		assert.Equal(t, int64(0), phaseOf(-5).min)
	})
}

func TestPhasePercentile(t *testing.T) {
	// Values 1..1000 µs; ab's percentile is the element at index
	// count*percent/100 of the sorted array: 50% -> index 500 -> 501 µs.
	p := newPhase()
	for v := int64(1000); v >= 1; v-- {
		p.record(v)
	}
	for _, tt := range []struct{ permyriad, want int64 }{
		{5000, 501}, {6600, 661}, {7500, 751}, {8000, 801}, {9000, 901},
		{9500, 951}, {9800, 981}, {9900, 991}, {9990, 1000}, {9999, 1000}, {10000, 1000},
	} {
		assert.Equal(t, tt.want, p.percentile(tt.permyriad), "permyriad %d", tt.permyriad)
	}
	// Ensure the small-count index truncates as ab's: 4 values, 66% -> index 2.
	q := phaseOf(100, 200, 300, 400)
	assert.Equal(t, int64(300), q.percentile(6600))
	assert.Equal(t, int64(400), q.percentile(7500))
	// Ensure the even-count median of 1..1000 is the element at index 500.
	assert.Equal(t, int64(501), p.median())
	assert.Equal(t, 500500*time.Nanosecond, p.figures().Mean)
}

func TestPhaseHistogramResolution(t *testing.T) {
	// Ensure values past the histogram's exact range are within 0.1% and
	// the maximum stays exact.
	p := phaseOf(123456, 234567, 345678)
	assert.InEpsilon(t, float64(234567), float64(p.percentile(5000)), 0.001)
	assert.Equal(t, int64(345678), p.percentile(10000))
	assert.Equal(t, int64(345678), p.at(2))
}

func TestPhaseMerge(t *testing.T) {
	// Ensure merging per-worker phases gives the figures of one phase fed
	// every value (Chan et al.'s update is exact up to rounding).
	values := []int64{5, 17, 17, 230, 4, 999, 1500, 61, 62, 63, 1, 2000}
	whole := phaseOf(values...)
	a, b := phaseOf(values[:5]...), phaseOf(values[5:]...)
	a.merge(b)
	a.merge(newPhase())
	assert.Equal(t, whole.count, a.count)
	assert.Equal(t, whole.sum, a.sum)
	assert.Equal(t, whole.figures().Median, a.figures().Median)
	assert.InDelta(t, whole.sd(), a.sd(), 1e-9)
	assert.Equal(t, whole.min, a.min)
	assert.Equal(t, whole.max, a.max)
}

func TestResultRates(t *testing.T) {
	// The seed's static run: 1000 requests at -c 12 in 15.477 s, 2935000
	// bytes. ab 2.3 prints 64.61 req/s, 185.724 ms and 15.477 ms per
	// request, and 2935000/1024/15.477 = 185.19 KiB/s (the 2002 ab divided
	// by 1000 and printed 189.64).
	res := &Result{CompleteRequests: 1000, ConcurrencyLevel: 12, TimeTaken: 15477 * time.Millisecond, TotalTransferred: 2935000}
	assert.InDelta(t, 64.61, res.RequestsPerSecond(), 0.005)
	assert.InDelta(t, 185.724, res.TimePerRequest(), 0.0005)
	assert.InDelta(t, 15.477, res.TimePerRequestAcross(), 0.0005)
	assert.InDelta(t, 185.19, res.TransferRate(), 0.005)

	// Ensure an empty run divides by nothing.
	empty := &Result{}
	for _, v := range []float64{empty.RequestsPerSecond(), empty.TimePerRequest(), empty.TimePerRequestAcross(), empty.TransferRate()} {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
		assert.Zero(t, v)
	}
}

func TestRoundMS(t *testing.T) {
	// Ensure ab's ap_round_ms: (us + 500) / 1000.
	for us, want := range map[int64]int64{0: 0, 499: 0, 500: 1, 1499: 1, 1500: 2, 185724: 186} {
		assert.Equal(t, want, roundMS(usec(us)), "%d µs", us)
	}
	// Ensure a mean is truncated to whole microseconds first, as ab's
	// integer division: 1499.9 µs -> 1499 µs -> 1 ms.
	assert.Equal(t, int64(1), roundMS(1499900*time.Nanosecond))
}

func TestPhaseAgainstExactSort(t *testing.T) {
	// Ensure, on random latencies over four decades, that every percentile
	// row and the median read from the histogram are within 0.1% of ab's
	// exact values from the sorted array, and the extremes exact.
	rng := rand.New(rand.NewPCG(7, 27))
	for _, n := range []int{2, 3, 10, 101, 1000, 5000} {
		values := make([]int64, n)
		p := newPhase()
		for i := range values {
			values[i] = int64(math.Exp(rng.Float64()*math.Log(1e6))) + 1
			p.record(values[i])
		}
		slices.Sort(values)
		for _, pm := range percentiles {
			want := values[len(values)-1]
			if pm < 10000 {
				want = values[int64(n)*pm/10000]
			}
			assert.InEpsilon(t, float64(want), float64(p.percentile(pm)), 0.001, "n=%d p%v", n, float64(pm)/100)
		}
		median := values[n/2]
		if n > 1 && n%2 == 1 {
			median = (values[n/2] + values[n/2+1]) / 2
		}
		assert.InEpsilon(t, float64(median), float64(p.median()), 0.001, "n=%d median", n)
		assert.Equal(t, values[0], p.min)
		assert.Equal(t, values[n-1], p.max)
	}
}

func TestPhaseEmptyAndHuge(t *testing.T) {
	// Ensure an empty phase reads as zeros, a negative value as 0 (ab's
	// ap_max), and a value past the histogram's hour keeps its exact
	// maximum.
	assert.Equal(t, Phase{}, newPhase().figures())
	assert.Zero(t, newPhase().at(3))
	p := phaseOf(-5, 2*histHighest)
	assert.Equal(t, int64(0), p.min)
	assert.Equal(t, 2*histHighest, p.max)
	assert.Equal(t, usec(2*histHighest), p.figures().Max)
}
