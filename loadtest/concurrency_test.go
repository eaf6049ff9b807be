package loadtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parts a run's goroutines share, under the race detector (make test
// runs -race): each must count every call exactly once.

func TestCauseMapConcurrent(t *testing.T) {
	// Ensure writes and arrivals of many keys from many goroutines are
	// each counted once: an arrival after its write is timed at once, one
	// before it when the write comes.
	c := newCauseMap(time.Minute)
	at := time.Now()
	const keys, streams = 50, 8
	var mu sync.Mutex
	timed := 0
	var wg sync.WaitGroup
	for s := range streams {
		wg.Go(func() {
			for k := range keys {
				if _, ok := c.delay([]byte(fmt.Sprint("key", k)), at.Add(time.Duration(s+1)*time.Millisecond)); ok {
					mu.Lock()
					timed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Go(func() {
		for k := range keys {
			n := len(c.put(fmt.Sprint("key", k), at))
			mu.Lock()
			timed += n
			mu.Unlock()
		}
	})
	wg.Wait()
	assert.Equal(t, keys*streams, timed, "every arrival timed once, early or late")
}

func TestStepStatsConcurrent(t *testing.T) {
	// Ensure a step recorded from many goroutines while its windows close
	// counts every value once, across its windows and the tail.
	s := newStepStats("page", true)
	start := time.Now()
	var wg sync.WaitGroup
	const writers, each = 8, 500
	for range writers {
		wg.Go(func() {
			for i := range each {
				s.record(time.Duration(i)*time.Microsecond, 0, 200, i%100 == 0)
			}
		})
	}
	var windowed int64
	for i := range 5 {
		w := s.closeWindow(start.Add(time.Duration(i)*time.Millisecond), start.Add(time.Duration(i+1)*time.Millisecond))
		windowed += w.Count
	}
	wg.Wait()
	windowed += s.closeWindow(start, start).Count
	r := s.result(time.Second)
	assert.EqualValues(t, writers*each, r.Count)
	assert.EqualValues(t, writers*each, windowed)
	assert.EqualValues(t, writers*each/100, r.Errors)
	assert.Equal(t, map[int]int64{200: writers * each}, r.StatusCodes)
	var kept int64
	for _, h := range s.wins {
		kept += h.TotalCount()
	}
	assert.EqualValues(t, writers*each, kept, "the kept histograms hold every value")
}

func TestRequestLogConcurrent(t *testing.T) {
	// Ensure lines written at once by many writers come out whole, none
	// lost.
	var b strings.Builder
	l := newRequestLog(&lockedWriter{w: &b})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			step := jsonString(fmt.Sprint("w", w))
			var line []byte
			for i := range 300 {
				line = appendRequestLine(line[:0], time.Unix(0, 0), time.Duration(i)*time.Microsecond, 200, 1, step, nil)
				l.write(line)
			}
		})
	}
	wg.Wait()
	require.NoError(t, l.close())
	lines := readLog(t, []byte(b.String()))
	assert.Len(t, lines, 8*300)
	counts := map[string]int{}
	for _, line := range lines {
		counts[line.Step]++
	}
	for w := range 8 {
		assert.Equal(t, 300, counts[fmt.Sprint("w", w)])
	}
}

func TestThinkTime(t *testing.T) {
	// Ensure think times are exponential with the mean asked (mean and
	// median within a few percent over many draws) and repeat with the
	// seed.
	u := &User{Rand: rand.New(rand.NewPCG(1, 2))}
	const n = 20000
	var sum time.Duration
	draws := make([]time.Duration, n)
	for i := range draws {
		draws[i] = u.ThinkTime(100 * time.Millisecond)
		sum += draws[i]
	}
	assert.InEpsilon(t, 100*time.Millisecond, sum/n, 0.05, "the mean")
	below := 0
	for _, d := range draws {
		if d < time.Duration(0.693*float64(100*time.Millisecond)) {
			below++
		}
	}
	assert.InEpsilon(t, n/2, below, 0.05, "an exponential's median is ln 2 of its mean")
	again := &User{Rand: rand.New(rand.NewPCG(1, 2))}
	assert.Equal(t, draws[0], again.ThinkTime(100*time.Millisecond))
}
