package lesson_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
)

// make loadtest's head-of-line defaults: the load at 80 req/s for 2.5 s a
// phase, the probe at 200 req/s.
var holDefault = lesson.HOLLoad{Rate: 80, Seconds: 2.5}

// fitted is the sentence's own account of the load it fitted, as
// scripts/loadtest.sh reads it.
var fitted = regexp.MustCompile(`^Scaled to this machine: the load at ([0-9.]+) req/s for ([0-9.]+) s a phase`)

func TestFitHOL(t *testing.T) {
	// The no-cache page beside sixteen busy loops: 8.85 ms on a CPU, the
	// loop on a CPU 12.6% of the time it wanted one, 70 ms of wall time.
	busyPage := lesson.PageCost{Pages: 44, LoopCPU: 390 * time.Millisecond, CPUWait: 2710 * time.Millisecond}
	t.Run("Busy", func(t *testing.T) {
		// Ensure a load the loop cannot serve is fitted to half of what it
		// can, long enough for the probe's p99 and for 15 pages, and the
		// sentence says so in the form the script reads.
		fit, s := lesson.FitHOL(lesson.Busy, holDefault, 200, busyPage, 1, "no read cache")
		assert.Equal(t, lesson.HOLLoad{Rate: 7, Seconds: 3}, fit)
		m := fitted.FindStringSubmatch(s)
		require.NotNil(t, m, s)
		assert.Equal(t, []string{"7", "3"}, m[1:])
		assert.Contains(t, s, "not 80 req/s for 2.5 s")
		assert.Contains(t, s, "the loop got one 12.6% of the time it wanted one")
		assert.Contains(t, s, "at 80 a second pages would queue on it for the whole run")
		// The expectation it states: at least 15 pages and 300 answers.
		assert.Contains(t, s, "about 21 pages and 304 of the probe's requests answered under load")
	})
	t.Run("FewAnswered", func(t *testing.T) {
		// Ensure a probe that got few of its requests answered alone
		// stretches the phases, at most four times the default's.
		fit, _ := lesson.FitHOL(lesson.Busy, holDefault, 200, busyPage, 0.5, "x")
		assert.Equal(t, 6.0, fit.Seconds, "300 answers at 100 req/s, the loop free half the time")
		fit, _ = lesson.FitHOL(lesson.Busy, holDefault, 200, busyPage, 0.1, "x")
		assert.Equal(t, 10.0, fit.Seconds, "at most 4 x 2.5 s")
	})
	t.Run("SlowPage", func(t *testing.T) {
		// Ensure a page the loop serves 3 of a second runs long enough
		// for 15 of them, and a rate is never under 1.
		slow := lesson.PageCost{Pages: 10, LoopCPU: time.Second, CPUWait: 2333 * time.Millisecond}
		fit, _ := lesson.FitHOL(lesson.Saturated, holDefault, 200, slow, 1, "x")
		assert.Equal(t, lesson.HOLLoad{Rate: 1, Seconds: 10}, fit, "1 req/s: 15 s wanted, 10 s at most")
	})
	for _, c := range []struct {
		name    string
		machine lesson.Verdict
		page    lesson.PageCost
		why     string
	}{
		// Ensure a quiet machine keeps make loadtest's figures as they are.
		{"Quiet", lesson.Quiet, busyPage, "the machine is quiet"},
		// Ensure a busy machine whose loop serves twice the rate keeps it.
		{"Enough", lesson.Busy, lesson.PageCost{Pages: 200, LoopCPU: time.Second, CPUWait: 100 * time.Millisecond},
			"so it serves about 181.8 pages a second (a run of the page, 200 pages), at least twice the 80 asked"},
		// Ensure a run without the loop's figures fits nothing.
		{"NoLoop", lesson.Busy, lesson.PageCost{Pages: 44}, "no figures of the loop's CPU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fit, s := lesson.FitHOL(c.machine, holDefault, 200, c.page, 1, "x")
			assert.Equal(t, holDefault, fit)
			assert.Contains(t, s, "The head-of-line load is not scaled (80 req/s for 2.5 s a phase): ")
			assert.Contains(t, s, c.why)
			assert.Nil(t, fitted.FindStringSubmatch(s))
		})
	}
}

func TestExplainHOLScaleRecorded(t *testing.T) {
	// Ensure the fit, on the no-cache load make loadtest recorded beside
	// sixteen busy loops (2026-12-07 15:00, a load average of 6 to 18:
	// 80 req/s asked, 9 to 15 served, the probe 3 to 10 of 500 answered),
	// asks for a rate the loop served there with time to spare, and on
	// the quiet run (a load average of 0.95) keeps 80 req/s.
	dir := filepath.Join("testdata", "holscale")
	start := filepath.Join("testdata", "machine", "busy-loadtest-start.json")
	for _, f := range []string{"busy-nocache-hol-1.json", "busy-nocache-hol-2.json", "busy-nocache-hol-3.json"} {
		var b bytes.Buffer
		require.NoError(t, lesson.ExplainOn(&b, lesson.Busy, lesson.ExplainHOLScale,
			[]string{"80", "2.5", "200", "no read cache=" + filepath.Join(dir, f), start}))
		m := fitted.FindStringSubmatch(b.String())
		require.NotNil(t, m, b.String())
		rate, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.True(t, rate >= 1 && rate <= 8, "%s: %v req/s, where the loop served 9 to 15 a second flat out", f, rate)
		assert.Contains(t, b.String(), "100% answered alone", f)
	}
	// Ensure the fit on make loadtest's own run of the page alone and its
	// first probe (2026-12-07 18:35, a load average of 19 to 25) is the
	// one that run used: 8 req/s for 4.5 s a phase, where the probe then
	// got 834 to 900 of its 900 due requests answered under load on each
	// server, and the loop attributed 833 and more a repeat.
	var b bytes.Buffer
	require.NoError(t, lesson.ExplainOn(&b, lesson.Saturated, lesson.ExplainHOLScale,
		[]string{"80", "2.5", "200", "no read cache=" + filepath.Join(dir, "busy-hol-page.json"), filepath.Join(dir, "busy-start.json")}))
	assert.Equal(t, []string{"8", "4.5"}, fitted.FindStringSubmatch(b.String())[1:], b.String())
	assert.Contains(t, b.String(), "(8.30 ms on a CPU; the loop got one 13.4% of the time it wanted one)")
	assert.Contains(t, b.String(), "71% answered alone")
	b.Reset()
	require.NoError(t, lesson.ExplainOn(&b, lesson.Quiet, lesson.ExplainHOLScale,
		[]string{"80", "2.5", "200", filepath.Join(dir, "quiet-nocache-hol-1.json")}))
	assert.Equal(t, "The head-of-line load is not scaled (80 req/s for 2.5 s a phase): the machine is quiet.\n", b.String())
}

func TestExplainHOLScaleUsage(t *testing.T) {
	// Ensure bad arguments are a usage error naming what is wanted.
	page := filepath.Join("testdata", "holscale", "quiet-nocache-hol-1.json")
	for _, args := range [][]string{
		{"80", "2.5", "200"},
		{"eighty", "2.5", "200", page},
		{"80", "0", "200", page},
		{"80", "2.5", "200", page + "," + page},
	} {
		err := lesson.ExplainOn(&bytes.Buffer{}, lesson.Busy, lesson.ExplainHOLScale, args)
		assert.ErrorIs(t, err, lesson.ErrUsage, fmt.Sprint(args))
	}
}
