package gameserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWaitSplit(t *testing.T) {
	// Ensure a request's wait is split by the readings around its
	// handler's start: a request read in the turn waited through the
	// wake-up and the turn's start; a queued one (or one that arrived
	// during an earlier turn) from then, whose part is read off the turn
	// before when it was sampled (the time before it at the turn's share)
	// and taken at the turn's share when not;
	// the CPU wait never exceeds the wait.
	ms := int64(time.Millisecond)
	w := waitAttrib{points: []waitPoint{{at: 100 * ms, delay: 50 * ms}, {at: 110 * ms, delay: 54 * ms}, {at: 120 * ms, delay: 54 * ms}}}
	d, i := w.delayAt(100*ms, 0)
	assert.Equal(t, int64(0), d)
	d, i = w.delayAt(105*ms, i)
	assert.Equal(t, 2*ms, d, "interpolated between the readings at 100 and 110 ms")
	d, i = w.delayAt(110*ms, i)
	assert.Equal(t, 4*ms, d, "read at 110 ms")
	d, _ = w.delayAt(130*ms, i)
	assert.Equal(t, 4*ms, d, "after the last reading: the last")

	fresh := waitRec{ready: 100 * ms, start: 110 * ms}
	assert.Equal(t, int64(0), w.earlierDelay(&fresh, 100*ms, 0.2), "ready at the wake-up")
	hol, cpu := fresh.split(100*ms, 1*ms, 4*ms, 0)
	assert.Equal(t, 5*ms, cpu, "the wake-up and the turn's 4 ms")
	assert.Equal(t, 6*ms, hol, "11 ms waited in all")

	queued := waitRec{ready: 90 * ms, start: 110 * ms, queued: true}
	w.wake = 1 * ms
	earlier := w.earlierDelay(&queued, 100*ms, 0.2)
	assert.InDelta(t, (9*ms)/5, earlier, 1, "the earlier 9 ms at the turn's share: the turn before was not sampled")
	hol, cpu = queued.split(100*ms, 1*ms, 4*ms, earlier)
	assert.InDelta(t, 1*ms+4*ms+(9*ms)/5, cpu, 1)
	assert.Equal(t, 20*ms-cpu, hol)

	// The turn before ran from 81 to 99 ms and waited 6 ms for a CPU; the
	// request was ready at 90 ms, halfway: 3 ms of it after.
	w.prevStart, w.prevEnd, w.prevOK = waitPoint{at: 81 * ms, delay: 40 * ms}, waitPoint{at: 99 * ms, delay: 46 * ms}, true
	assert.InDelta(t, 3*ms, w.earlierDelay(&queued, 100*ms, 0.2), 1, "read off the turn before")
	early := waitRec{ready: 70 * ms, start: 110 * ms, queued: true}
	// Ready at 70 ms, before the turn before (a request that turn left):
	// its 6 ms read off, the 11 ms before it at the share.
	assert.InDelta(t, 6*ms+(11*ms)/5, w.earlierDelay(&early, 100*ms, 0.2), 1, "the turn before's readings, the rest at the share")

	hol, cpu = fresh.split(100*ms, 1*ms, 15*ms, 0) // a reading after the handler's start
	assert.Equal(t, int64(0), hol)
	assert.Equal(t, 11*ms, cpu, "all of it, no more")
}

func TestWaitSampleShare(t *testing.T) {
	// Ensure every turn is sampled while the loop turns under
	// waitSampleRate times a second, and about that many a second above.
	ms := int64(time.Millisecond)
	var w waitAttrib
	w.share = 1
	sampled := 0
	for i := range 100 { // 100 turns in 100 ms
		if w.sampleNext(int64(i) * ms) {
			sampled++
		}
	}
	assert.Equal(t, 100, sampled, "1,000 turns a second: every one")
	sampled = 0
	start := 100 * ms
	for i := range 100_000 { // 100,000 turns a second for a second
		if w.sampleNext(start + int64(i)*10_000) {
			sampled++
		}
	}
	assert.InDelta(t, waitSampleRate, sampled, 200, "about waitSampleRate in that second, the jump's period included")
}
