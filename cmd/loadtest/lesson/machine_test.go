package lesson_test

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
)

func TestJudge(t *testing.T) {
	quiet := lesson.MachineSigns{ProbeP99: 800 * time.Microsecond, ProbeAsked: 200, ProbeGot: 200,
		CPUWait: 8 * time.Millisecond, Run: 2 * time.Second, CPUWaitKnown: true, ClientLateP99: 100 * time.Microsecond, ClientLateKnown: true}
	t.Run("Quiet", func(t *testing.T) {
		// Ensure a machine that left the run alone is quiet, with every
		// sign named.
		j := lesson.Judge(quiet)
		assert.Equal(t, lesson.Quiet, j.Verdict)
		assert.Equal(t, "machine: 2 cores; quiet: every figure holds (the probe alone 200 of 200 due requests answered, its p99 0.80 ms, "+
			"the loop waited for a CPU 0.4% of the run's 2.0 s, the load generator's own lateness p99 0.10 ms)", j.Line("2 cores"))
	})
	for _, c := range []struct {
		name string
		edit func(*lesson.MachineSigns)
		want lesson.Verdict
		mark string
	}{
		// Ensure each sign alone past its bound makes the machine busy.
		{"BusyProbe", func(s *lesson.MachineSigns) { s.ProbeP99 = 12 * time.Millisecond }, lesson.Busy, "its p99 12.00 ms (at least 10.00 ms)"},
		{"BusyCPUWait", func(s *lesson.MachineSigns) { s.CPUWait = 600 * time.Millisecond }, lesson.Busy, "30.0% (at least 10.0%) of the run's 2.0 s"},
		{"BusyClient", func(s *lesson.MachineSigns) { s.ClientLateP99 = 12 * time.Millisecond }, lesson.Busy, "12.00 ms (at least 10.00 ms)"},
		// Ensure each sign past its saturated bound makes it saturated.
		{"SaturatedProbe", func(s *lesson.MachineSigns) { s.ProbeP99 = 2 * time.Second }, lesson.Saturated, "(at least 1000.00 ms)"},
		{"SaturatedCPUWait", func(s *lesson.MachineSigns) { s.CPUWait = 1900 * time.Millisecond }, lesson.Saturated, "95.0% (at least 80.0%)"},
		{"SaturatedClient", func(s *lesson.MachineSigns) { s.ClientLateP99 = time.Second }, lesson.Saturated, "(at least 250.00 ms)"},
		{"SaturatedAnswered", func(s *lesson.MachineSigns) { s.ProbeGot = 150 }, lesson.Saturated, "150 of 200 due requests answered (under 90%)"},
		// Ensure a p99 of too few responses is no sign and says so.
		{"FewResponses", func(s *lesson.MachineSigns) { s.ProbeAsked, s.ProbeGot, s.ProbeP99 = 50, 50, time.Minute }, lesson.Quiet,
			"its p99 n/a (50 responses)"},
		// Ensure a sign the run did not measure is left out, not read as zero.
		{"Unknown", func(s *lesson.MachineSigns) { s.CPUWaitKnown, s.CPUWait = false, 2*time.Second }, lesson.Quiet, "its p99 0.80 ms, the load generator"},
		// Ensure the loop's wait for a CPU over too short a run is no
		// sign: a hiccup is the whole figure.
		{"ShortRun", func(s *lesson.MachineSigns) { s.CPUWait, s.Run = 300*time.Millisecond, 500*time.Millisecond }, lesson.Quiet,
			"the loop's wait for a CPU n/a (0.50 s measured)"},
		// Ensure what a quiet machine showed (make loadtest at a load
		// average of 0.45: the loop's wait for a CPU was 54% of the time
		// it wanted to run, 7.5% of the run) is quiet.
		{"QuietNearlyIdleLoop", func(s *lesson.MachineSigns) {
			s.ProbeP99, s.CPUWait, s.ClientLateP99 = 4660*time.Microsecond, 150*time.Millisecond, 3690*time.Microsecond
		}, lesson.Quiet, "7.5% of the run's 2.0 s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := quiet
			c.edit(&s)
			j := lesson.Judge(s)
			assert.Equal(t, c.want, j.Verdict)
			assert.Contains(t, strings.Join(j.Signs, ", "), c.mark)
		})
	}
	t.Run("Busy", func(t *testing.T) {
		// Ensure a busy verdict says what still holds.
		s := quiet
		s.CPUWait = time.Second
		assert.Contains(t, lesson.Judge(s).Line("x"), "; busy: the client's latencies are unreliable, the loop's figures hold")
	})
	t.Run("Nothing", func(t *testing.T) {
		// Ensure a run with no sign says it was not judged.
		assert.Equal(t, "machine: x; not judged (no probe, no loop figures, no schedule measured)", lesson.Judge(lesson.MachineSigns{}).Line("x"))
	})
}

func TestAbout(t *testing.T) {
	// Ensure the machine is named with its cores, Go and load average.
	a := lesson.About()
	assert.Regexp(t, `^\d+ cores, .+, go.+, load average (unknown|[0-9.]+ [0-9.]+ [0-9.]+)$`, a)
}

func TestP99Text(t *testing.T) {
	// Ensure no p99 is printed from fewer than 100 responses.
	assert.Equal(t, "n/a (99 responses)", lesson.P99Text(12, 99, lesson.Ms))
	assert.Equal(t, "12.00 ms", lesson.P99Text(12, 100, lesson.Ms))
}

func TestCoresIgnoresAffinity(t *testing.T) {
	// Ensure the machine's cores are counted, not the process's
	// affinity (a pinned load generator sees one).
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skip("no /sys/devices/system/cpu/online")
	}
	assert.GreaterOrEqual(t, lesson.Cores(), 1, string(b))
	assert.GreaterOrEqual(t, lesson.Cores(), runtime.NumCPU(), "at least the CPUs this process may use")
}
