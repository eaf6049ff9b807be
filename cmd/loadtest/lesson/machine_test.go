package lesson_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
)

func TestJudge(t *testing.T) {
	quiet := lesson.MachineSigns{ProbeP99: 800 * time.Microsecond, ProbeAsked: 200, ProbeGot: 200,
		CPUWaitShare: 0.004, CPUWaitKnown: true, ClientLateP99: 100 * time.Microsecond, ClientLateKnown: true}
	t.Run("Quiet", func(t *testing.T) {
		// Ensure a machine that left the run alone is quiet, with every
		// sign named.
		j := lesson.Judge(quiet)
		assert.Equal(t, lesson.Quiet, j.Verdict)
		assert.Equal(t, "machine: 2 cores; quiet: every figure holds (the probe alone 200 of 200 due requests answered, its p99 0.80 ms, "+
			"the loop waited for a CPU 0.4% of the time it wanted to run, the load generator's own lateness p99 0.10 ms)", j.Line("2 cores"))
	})
	for _, c := range []struct {
		name string
		edit func(*lesson.MachineSigns)
		want lesson.Verdict
		mark string
	}{
		// Ensure each sign alone past its bound makes the machine busy.
		{"BusyProbe", func(s *lesson.MachineSigns) { s.ProbeP99 = 12 * time.Millisecond }, lesson.Busy, "its p99 12.00 ms (at least 5.00 ms)"},
		{"BusyCPUWait", func(s *lesson.MachineSigns) { s.CPUWaitShare = 0.3 }, lesson.Busy, "30.0% (at least 5.0%)"},
		{"BusyClient", func(s *lesson.MachineSigns) { s.ClientLateP99 = 3 * time.Millisecond }, lesson.Busy, "3.00 ms (at least 2.00 ms)"},
		// Ensure each sign past its saturated bound makes it saturated.
		{"SaturatedProbe", func(s *lesson.MachineSigns) { s.ProbeP99 = 2 * time.Second }, lesson.Saturated, "(at least 1000.00 ms)"},
		{"SaturatedCPUWait", func(s *lesson.MachineSigns) { s.CPUWaitShare = 0.95 }, lesson.Saturated, "95.0% (at least 90.0%)"},
		{"SaturatedClient", func(s *lesson.MachineSigns) { s.ClientLateP99 = time.Second }, lesson.Saturated, "(at least 250.00 ms)"},
		{"SaturatedAnswered", func(s *lesson.MachineSigns) { s.ProbeGot = 150 }, lesson.Saturated, "150 of 200 due requests answered (under 90%)"},
		// Ensure a p99 of too few responses is no sign and says so.
		{"FewResponses", func(s *lesson.MachineSigns) { s.ProbeAsked, s.ProbeGot, s.ProbeP99 = 50, 50, time.Minute }, lesson.Quiet,
			"its p99 n/a (50 responses)"},
		// Ensure a sign the run did not measure is left out, not read as zero.
		{"Unknown", func(s *lesson.MachineSigns) { s.CPUWaitKnown, s.CPUWaitShare = false, 0.99 }, lesson.Quiet, "its p99 0.80 ms, the load generator"},
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
		s.CPUWaitShare = 0.5
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
