package lesson

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Verdict is a run's judgement of the machine it ran on (see Judge).
type Verdict string

// The verdicts, from best to worst.
const (
	// Quiet: the machine left the run alone; every figure holds, the
	// client's latencies included.
	Quiet Verdict = "quiet"
	// Busy: other work took CPU from the run. The client's latencies
	// are unreliable (they carry the machine's queue for a CPU); the
	// server loop's own figures (its attribution of each request's wait,
	// its CPU per request, its utilization) still hold, so a lesson is
	// told from them and the client's latencies are context.
	Busy Verdict = "busy"
	// Saturated: the machine could not even deliver a light probe or
	// keep the loop on a CPU; no figure of the run is worth reading:
	// rerun on a quieter machine.
	Saturated Verdict = "saturated"
)

// The bounds Judge applies, set on what make loadtest's light probe (/
// at 200 req/s for 2 s, the servers on one core and the load generator on
// the other) measured on the project's 2-core machine: quiet (a load
// average under 1), its p99 2.0-4.7 ms (the probe's latency counts from
// when each request was due, and a load generator's timers on one core
// fire up to a few milliseconds late), the loop's wait for a CPU 0.3% to
// 7.5% of the run (the first probe, beside five servers still starting
// on its core), the load generator's own lateness p99 2.2-3.7 ms; beside
// sixteen busy loops, its p99 50-51 ms, the loop's wait for a CPU 35-51%
// of the run, the lateness p99 4.6-5.1 ms. Each busy bound lies between
// the two with room on both sides, except the lateness's, which a quiet
// pinned client meets with room and busy loops need not reach: it
// catches a load generator starved on its own core.
const (
	// BusyProbeP99 and SaturatedProbeP99 bound the p99 latency of a light
	// probe with nothing else loading the server.
	BusyProbeP99      = 10 * time.Millisecond
	SaturatedProbeP99 = time.Second
	// BusyCPUWait and SaturatedCPUWait bound the share of the run's wall
	// time that the loop's thread spent runnable but waiting for a CPU.
	// A light probe's loop wants a CPU a few percent of the time and gets
	// one at once on a quiet machine; each wake-up behind busy threads
	// on its core waits for a time slice.
	BusyCPUWait      = 0.10
	SaturatedCPUWait = 0.8
	// MinCPUWaitRun is the least wall time the loop's wait for a CPU is
	// judged over: over less, a scheduling hiccup is the whole figure.
	MinCPUWaitRun = time.Second
	// BusyClientLate and SaturatedClientLate bound the p99 of the load
	// generator's own lateness: how long after a request was due (and a
	// connection free) the client got to send it.
	BusyClientLate      = 10 * time.Millisecond
	SaturatedClientLate = 250 * time.Millisecond
	// SaturatedAnswered is the least share of its due requests a light
	// probe must get answered for the machine to be judged at all.
	SaturatedAnswered = 0.9
)

// MachineSigns are what a run measured of the machine under it, for
// Judge. Every sign is optional; a run judges from those it has.
type MachineSigns struct {
	// ProbeP99 is the p99 latency of a light probe (a static page, open
	// loop at a modest rate, corrected for coordinated omission) with
	// nothing else loading the server; ProbeAsked is how many requests
	// its schedule had due and ProbeGot how many were answered. A
	// ProbeGot of 0 means no probe was run (or none answered: with
	// ProbeAsked above 0, saturated). A p99 counts only from 100
	// responses (MinP99Samples); with fewer it is not a sign.
	ProbeP99   time.Duration
	ProbeAsked int64
	ProbeGot   int64
	// CPUWait is the time the server loop's thread was runnable but
	// waiting for a CPU (the increase of
	// gameserver_loop_cpu_wait_seconds_total) over Run, the probe's wall
	// time; CPUWaitKnown is false when the server does not say (net/http,
	// the portable back end). It is a sign only over MinCPUWaitRun or more.
	CPUWait      time.Duration
	Run          time.Duration
	CPUWaitKnown bool
	// ClientLateP99 is the p99 of the load generator's own lateness
	// (loadtest's OpenLoop.ClientLatenessP99); ClientLateKnown is false
	// for a closed-loop run, which has no schedule to be late for.
	ClientLateP99   time.Duration
	ClientLateKnown bool
}

// Judgement is Judge's verdict and the signs it read.
type Judgement struct {
	Verdict Verdict
	// Signs are the signs read, in words, those past a bound marked
	// with the bound: "the probe alone p99 12.40 ms (over 5.00 ms)".
	Signs []string
}

// Judge judges the machine from signs: Saturated if any sign is past its
// Saturated bound (the probe got fewer than SaturatedAnswered of its due
// requests answered, or any figure at or above SaturatedProbeP99,
// SaturatedCPUWait (of the run's wall time), SaturatedClientLate), else
// Busy if any is at or above its Busy bound, else Quiet. With no sign at all it is Quiet with no
// Signs: the caller says nothing was measured (Line does). Safe for any
// goroutine; it reads nothing but signs.
func Judge(s MachineSigns) Judgement {
	j := Judgement{Verdict: Quiet}
	worse := func(v Verdict) {
		if v == Saturated || v == Busy && j.Verdict == Quiet {
			j.Verdict = v
		}
	}
	if s.ProbeAsked > 0 {
		answered := fmt.Sprintf("%d of %d due requests answered", s.ProbeGot, s.ProbeAsked)
		if float64(s.ProbeGot) < SaturatedAnswered*float64(s.ProbeAsked) {
			answered += fmt.Sprintf(" (under %.0f%%)", 100*SaturatedAnswered)
			worse(Saturated)
		}
		j.Signs = append(j.Signs, "the probe alone "+answered)
	}
	if s.ProbeGot >= MinP99Samples {
		j.Signs = append(j.Signs, "its p99 "+judged(Ms(ms(s.ProbeP99)), s.ProbeP99 >= BusyProbeP99, s.ProbeP99 >= SaturatedProbeP99,
			Ms(ms(BusyProbeP99)), Ms(ms(SaturatedProbeP99)), worse))
	} else if s.ProbeGot > 0 {
		j.Signs = append(j.Signs, fmt.Sprintf("its p99 n/a (%d responses)", s.ProbeGot))
	}
	switch share := float64(s.CPUWait) / float64(max(s.Run, 1)); {
	case !s.CPUWaitKnown:
	case s.Run < MinCPUWaitRun:
		j.Signs = append(j.Signs, fmt.Sprintf("the loop's wait for a CPU n/a (%.2f s measured)", s.Run.Seconds()))
	default:
		j.Signs = append(j.Signs, fmt.Sprintf("the loop waited for a CPU %s of the run's %.1f s", judged(percent1(share),
			share >= BusyCPUWait, share >= SaturatedCPUWait, percent1(BusyCPUWait), percent1(SaturatedCPUWait), worse), s.Run.Seconds()))
	}
	if s.ClientLateKnown {
		j.Signs = append(j.Signs, "the load generator's own lateness p99 "+judged(Ms(ms(s.ClientLateP99)), s.ClientLateP99 >= BusyClientLate,
			s.ClientLateP99 >= SaturatedClientLate, Ms(ms(BusyClientLate)), Ms(ms(SaturatedClientLate)), worse))
	}
	return j
}

// judged is v, marked with the bound it reached, and reports the verdict
// to worse.
func judged(v string, busy, saturated bool, busyBound, saturatedBound string, worse func(Verdict)) string {
	switch {
	case saturated:
		worse(Saturated)
		return v + " (at least " + saturatedBound + ")"
	case busy:
		worse(Busy)
		return v + " (at least " + busyBound + ")"
	}
	return v
}

// What each verdict means for the figures after it.
var verdictMeaning = map[Verdict]string{
	Quiet:     "every figure holds",
	Busy:      "the client's latencies are unreliable, the loop's figures hold: the lessons are told from the loop's attribution and CPU per request",
	Saturated: "no figure of this run holds: rerun on a quieter machine",
}

// Line is the machine line that opens and closes make loadtest and make
// capacity: "machine: " + about (see About) + "; " + the verdict, what it
// means for the figures, and the signs it was judged from. With no sign
// it says the run measured nothing to judge from.
func (j Judgement) Line(about string) string {
	if len(j.Signs) == 0 {
		return fmt.Sprintf("machine: %s; not judged (no probe, no loop figures, no schedule measured)", about)
	}
	return fmt.Sprintf("machine: %s; %s: %s (%s)", about, j.Verdict, verdictMeaning[j.Verdict], strings.Join(j.Signs, ", "))
}

// About is the machine as the machine line names it: "2 cores, Linux
// 6.18.44, go1.26.8, load average 0.52 0.61 0.70" (the binary's Go; the
// load average "unknown" where /proc/loadavg is not). The 1-minute load
// average lags a change by a minute or more: it is context, and Judge
// never reads it.
func About() string {
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d cores, %s, %s, load average %s", Cores(), kernel, runtime.Version(), LoadAverage())
}

// LoadAverage is /proc/loadavg's 1, 5 and 15-minute load averages,
// "0.52 0.61 0.70", or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// MinP99Samples is the fewest responses a p99 is printed from: with fewer,
// the 99th percentile is the worst response or next to it, one sample,
// and is written "n/a (k responses)" instead (see P99Text).
const MinP99Samples = 100

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percent1 is a share as a percentage with one decimal: "4.2%".
func percent1(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

// Cores is the machine's online CPUs (/sys/devices/system/cpu/online),
// not the ones this process may run on: make loadtest pins the load
// generator, which then sees one. runtime.NumCPU where the file is not.
func Cores() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, found := strings.Cut(r, "-")
		a, errA := strconv.Atoi(lo)
		z, errZ := strconv.Atoi(hi)
		switch {
		case errA != nil:
			return runtime.NumCPU()
		case !found:
			n++
		case errZ == nil && z >= a:
			n += z - a + 1
		default:
			return runtime.NumCPU()
		}
	}
	return n
}
