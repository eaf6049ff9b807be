package loadtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFieldHelpers(t *testing.T) {
	// Ensure the field helpers read RFC 9110's lists: decimals without
	// sign or overflow, tokens case-insensitively between commas and
	// optional white space, the last coding, OWS trimmed.
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"0", 0, true}, {"2159", 2159, true}, {"", 0, false}, {"-1", 0, false}, {"1x", 0, false},
		{"999999999999999999", 999999999999999999, true}, {"1000000000000000000", 0, false}} {
		n, ok := parseDecimal([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, tc.in)
		if ok {
			assert.Equal(t, tc.want, n, tc.in)
		}
	}
	assert.True(t, hasToken([]byte("keep-alive, Close"), "close"))
	assert.True(t, hasToken([]byte(" close "), "close"))
	assert.False(t, hasToken([]byte("closed"), "close"))
	assert.False(t, hasToken([]byte(""), "close"))
	assert.True(t, lastTokenIs([]byte("gzip, Chunked"), "chunked"))
	assert.False(t, lastTokenIs([]byte("chunked, gzip"), "chunked"))
	assert.Equal(t, "a b", string(trimOWS([]byte(" \ta b\t "))))
	assert.Empty(t, trimOWS([]byte("  ")))
	assert.True(t, equalFold([]byte("Content-LENGTH"), "content-length"))
	assert.False(t, equalFold([]byte("content-lengths"), "content-length"))
}

func TestFieldsAdd(t *testing.T) {
	// Ensure a header's fields set the framing and persistence, agreeing
	// lengths pass and others are refused, as are folded and colonless
	// lines, and only the first Server field is kept.
	var r response
	r.reset(false, true)
	f := fields{length: -1}
	for _, l := range []string{"Content-Length: 5", "content-length: 5, 5", "Connection: keep-alive", "Server: a/1", "Server: b/2",
		"Transfer-Encoding: gzip, chunked", "X-Other: whatever"} {
		assert.NoError(t, f.add([]byte(l), &r), l)
	}
	assert.Equal(t, fields{length: 5, chunked: true, transferCoding: true, keepAlive: true}, f)
	assert.Equal(t, "a/1", r.server)
	for _, l := range []string{"Content-Length: 6", "Content-Length: x", "Content-Length: 5, 6", " folded: value", "no colon", ": empty name"} {
		g := fields{length: 5}
		assert.Error(t, g.add([]byte(l), &r), l)
	}
	g := fields{length: -1}
	assert.Error(t, g.add([]byte("Content-Length: "), &r), "an empty length")
}

func TestPacerLateness(t *testing.T) {
	// Ensure how late a request was sent is split in two: the part it
	// waited for a free connection (claimed after it was due), counted,
	// and the client's own delay after that, not counted.
	due := time.Now()
	for _, tc := range []struct {
		claimed, sent  time.Duration // after due
		queued, client time.Duration
	}{
		{0, 0, 0, 0},
		{-time.Millisecond, 2 * time.Millisecond, 0, 2 * time.Millisecond},
		{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 0},
		{5 * time.Millisecond, 8 * time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond},
	} {
		p := pacer{due: due, claimed: due.Add(tc.claimed)}
		q, c := p.lateness(due.Add(tc.sent))
		assert.Equal(t, tc.queued, q, "%+v", tc)
		assert.Equal(t, tc.client, c, "%+v", tc)
	}
}

func TestUnsent(t *testing.T) {
	// Ensure the requests due in the time limit and never sent are the
	// schedule's less those completed, capped by the request budget.
	assert.EqualValues(t, 40, unsent(100, time.Second, 0, 60))
	assert.EqualValues(t, 0, unsent(100, time.Second, 0, 130), "more than due: none")
	assert.EqualValues(t, 10, unsent(100, time.Second, 50, 40), "the budget caps what was due")
	assert.EqualValues(t, 1, unsent(100, 5*time.Millisecond+time.Microsecond, 0, 0), "a started tick counts")
}

func TestDistribution(t *testing.T) {
	// Ensure the percentile distribution rises to 100%, its values within
	// the exact min and max, and is empty for fewer than two values.
	p := newPhase()
	for _, v := range []int64{100, 200, 300, 400, 100000} {
		p.record(v)
	}
	d := distribution(p)
	assert.Greater(t, len(d), 5)
	assert.Equal(t, 100.0, d[len(d)-1].Percent)
	assert.Equal(t, 100*time.Millisecond, d[len(d)-1].Latency, "the exact maximum")
	for i, q := range d {
		assert.GreaterOrEqual(t, q.Latency, 100*time.Microsecond)
		if i > 0 {
			assert.GreaterOrEqual(t, q.Percent, d[i-1].Percent)
			assert.GreaterOrEqual(t, q.Latency, d[i-1].Latency)
		}
	}
	one := newPhase()
	one.record(5)
	assert.Nil(t, distribution(one))
	assert.Nil(t, percentileTable(one), "ab prints no table for one request")
}

func TestMergeTimelines(t *testing.T) {
	// Ensure the workers' seconds add up by second, each stamped, with
	// the uncorrected figures beside under Rate.
	start := time.Now()
	a, b := &worker{tl: &timeline{start: start}}, &worker{tl: &timeline{start: start}}
	a.tl.record(start.Add(100*time.Millisecond), 1000, 500)
	b.tl.record(start.Add(200*time.Millisecond), 3000, 1500)
	b.tl.record(start.Add(1500*time.Millisecond), 2000, 2000)
	a.tl.record(start.Add(-2*time.Second), 9, 9) // before the start: dropped
	secs, hists := mergeTimelines([]*worker{a, b}, start)
	assert.Len(t, secs, 2)
	assert.EqualValues(t, 2, secs[0].Requests)
	assert.InDelta(t, 3, ms(secs[0].Max), 0.05)
	assert.InDelta(t, 1.5, ms(secs[0].UncorrectedMax), 0.05)
	assert.Equal(t, time.Second, secs[1].At)
	assert.EqualValues(t, 1, secs[1].Requests)
	assert.Len(t, hists, 2)
	assert.Equal(t, start.Add(time.Second).UnixMilli(), hists[1].StartTimeMs())
	assert.Equal(t, start.Add(2*time.Second).UnixMilli(), hists[1].EndTimeMs())
	none, nh := mergeTimelines([]*worker{{}}, start)
	assert.Nil(t, none, "no timeline kept")
	assert.Nil(t, nh)
}
