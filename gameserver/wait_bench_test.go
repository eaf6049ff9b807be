//go:build linux && !gameserver_portable

package gameserver_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

// BenchmarkWaitHeadOfLine is the scene of TestWaitHeadOfLine and
// TestWaitCPUHog, repeated for the figures a test cannot bound on a busy
// machine: each iteration, a probe (2 ms on a CPU) is read in the same
// turn as a request whose handler runs 10 ms on a CPU, with the loop
// pinned to the last CPU, alone (hog=false) and beside a busy thread
// pinned to the same CPU (hog=true). It reports the probe's head-of-line
// wait and its wait for a CPU, as the slow-request log gives them: the
// median and the largest of the iterations (hol-p50-ms, hol-max-ms,
// cpu-wait-p50-ms, cpu-wait-max-ms), and the share of the time the loop's
// thread wanted to run that it waited for a CPU over the whole run
// (loop-cpu-wait-%, Stats.CPUWaitShare), which says how busy the machine
// was. On an idle machine, alone: head-of-line at least 8 ms, CPU wait
// under 1 ms; beside the hog the CPU wait grows (about the 10 ms of the
// slow handler: the hog takes half the CPU) and head-of-line does not.
// Run it alone:
//
//	go test ./gameserver -run '^$' -bench WaitHeadOfLine -benchtime 20x
func BenchmarkWaitHeadOfLine(b *testing.B) {
	cpu := lastCPU(b)
	for _, hog := range []bool{false, true} {
		b.Run("hog="+strconv.FormatBool(hog), func(b *testing.B) {
			h := startHOL(b, gameserver.Config{LoopCPUs: []int{cpu}, SlowRequest: time.Millisecond})
			if hog {
				defer hogCPU(b, cpu)()
			}
			h.scene(b, "/probe2") // a first scene, which the figures leave out
			before := h.s.Stats()
			var hol, wait []time.Duration
			for b.Loop() {
				start := time.Now()
				h.scene(b, "/probe1")
				e := newestSlow(b, h.s, "/probe1")
				require.True(b, e.Attributed && !e.Time.Before(start), "this iteration's probe, attributed: %+v", e)
				hol, wait = append(hol, e.HeadOfLine), append(wait, e.CPUWait)
			}
			share, _ := h.s.Stats().CPUWaitShare(before)
			b.ReportMetric(ms(testkit.Quantile(hol, 0.5)), "hol-p50-ms")
			b.ReportMetric(ms(testkit.Quantile(hol, 1)), "hol-max-ms")
			b.ReportMetric(ms(testkit.Quantile(wait, 0.5)), "cpu-wait-p50-ms")
			b.ReportMetric(ms(testkit.Quantile(wait, 1)), "cpu-wait-max-ms")
			b.ReportMetric(100*share, "loop-cpu-wait-%")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// newestSlow returns the newest entry of s's slow-request log for path.
func newestSlow(b *testing.B, s *gameserver.Server, path string) gameserver.SlowRequest {
	b.Helper()
	for _, e := range s.SlowRequests() { // newest first
		if e.Path == path {
			return e
		}
	}
	b.Fatalf("no slow-request entry for %s", path)
	return gameserver.SlowRequest{}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
