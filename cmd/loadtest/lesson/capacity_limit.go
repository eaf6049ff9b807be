package lesson

import (
	"fmt"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// LimitVerdict says which side of a capacity run reached its limit first: Who
// in a few words ("the server", "the load generator", "the machine"), Why
// in a sentence with the figures it rests on.
type LimitVerdict struct{ Who, Why string }

const (
	// clientLimit is the load generator's share of its cores from which
	// it, not the server, is the limit: a generator that busy starts its
	// steps late and reads its streams late, and the server's figure is
	// only a lower bound.
	clientLimit = 0.9
	// waitedShare: when the whole server process used less CPU than this
	// share of the loop's busy (wall) time, the loop's thread spent the
	// rest waiting in its turns: runnable without a CPU, or blocked on
	// the disk: the machine's, not the server's work.
	waitedShare = 0.6
	// lateLimit is the load generator's lateness p99 from which the
	// client's timing is not to be trusted (docs/capacity.md: "tens of
	// milliseconds").
	lateLimit = 50 * time.Millisecond
)

// Limit judges a run that broke (res.Broke) from the windows that broke
// (res.BrokeAt on): the load generator when its own CPU filled its cores;
// the machine when the server's loop was busy far longer than the server
// had a CPU, or when the load generator ran late though not busy; the
// server otherwise, saying whether its loop's CPU or something else.
func Limit(res *loadtest.UsersResult) LimitVerdict {
	if res.Broke == "" || res.BrokeAt < 0 || res.BrokeAt >= len(res.Windows) {
		return LimitVerdict{"none", "none: no service level broke"}
	}
	broken := res.Windows[res.BrokeAt:]
	var client, cpu, busy float64
	var cores string
	for _, w := range broken {
		if c := w.ClientCPU; c.Share > client {
			client, cores = c.Share, c.CoresText()
		}
		if l := w.Loop; l.HasLoop() && l.Utilization*w.Length.Seconds() > busy {
			busy, cpu = l.Utilization*w.Length.Seconds(), l.CPU.Seconds()
		}
	}
	switch late := lateness(res); {
	case client >= clientLimit:
		return LimitVerdict{"the load generator", fmt.Sprintf("the load generator: its own CPU was %.0f%% of its %s in the windows that broke, "+
			"so it, not the server, set this figure (the server's capacity is at least it; give the load generator more cores, CPU=S:C)", 100*client, cores)}
	case busy > 0 && cpu < waitedShare*busy:
		return LimitVerdict{"the machine", fmt.Sprintf("the machine: in the window that broke the loop was busy %.0f ms but the whole server had a CPU "+
			"%.0f ms of it: its thread waited, for a CPU that other work held (see the load average; CPU= pins the server) or for the disk", 1000*busy, 1000*cpu)}
	case late >= lateLimit:
		return LimitVerdict{"the machine", fmt.Sprintf("the machine: the load generator started its steps late by %s at p99 over the run "+
			"while its CPU was %.0f%% of its cores: it waited for a CPU", usText(late), 100*client)}
	}
	return LimitVerdict{"the server", "the server: " + serverLimit(broken[0], client)}
}

// serverLimit says what of the server's limit window w shows.
func serverLimit(w loadtest.Window, client float64) string {
	gen := fmt.Sprintf("the load generator at %.0f%% of its cores", 100*client)
	if !w.ClientCPU.Known {
		gen = "the load generator's CPU unknown"
	}
	l := w.Loop
	switch {
	case l.HasLoop() && l.Utilization >= 0.85:
		return fmt.Sprintf("its loop was %.0f%% busy, its CPU the limit (%s)", 100*l.Utilization, gen)
	case l.HasLoop():
		return fmt.Sprintf("its loop was %.0f%% busy, its longest turn %.1f ms: not its CPU but what waited in it, a long turn "+
			"or the pace of the fan-out (%s)", 100*l.Utilization, float64(w.LongestTurnRecent)/float64(time.Millisecond), gen)
	case l != nil && l.Error == "" && l.CPU > 0:
		return fmt.Sprintf("it used %.2f cores of CPU, no loop figures (%s)", l.CPU.Seconds()/max(w.Length.Seconds(), 1e-9), gen)
	}
	return fmt.Sprintf("no figures of its own (no -metrics; %s)", gen)
}

// lateness is the load generator's largest lateness p99 of a step.
func lateness(res *loadtest.UsersResult) time.Duration {
	var d time.Duration
	for _, s := range res.Steps {
		d = max(d, s.LatenessP99)
	}
	return d
}
