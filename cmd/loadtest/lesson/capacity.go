package lesson

import (
	"fmt"
	"strings"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// Capacity is make capacity's line on a run of cmd/players ramped until a
// service level broke (UsersConfig.StopWhen), label naming the server's
// engine: the players connected at the end of the last window that held
// every -stop-when threshold, with that window's request rate, the
// server's CPU and, for a server with an event loop, its loop figures.
// Its event rate is over that window and the one before: a tick fans out
// to every stream at once, so one 5 s window of a 10 s tick counts either
// thousands of events a second or a few dozen. It ends with what broke
// after that window and which side reached its limit first (Limit).
func Capacity(label string, res *loadtest.UsersResult) string {
	if len(res.Windows) == 0 {
		return fmt.Sprintf("capacity: unknown (engine %s: the run ended before its first window)", label)
	}
	i, note := len(res.Windows)-1, ", held to the end of the ramp: the capacity is higher"
	if res.Broke != "" {
		i, note = res.BrokeAt-1, ", then "+res.Broke
	}
	if i < 0 {
		return fmt.Sprintf("capacity: under %d players (engine %s: %s in the first window; first to reach its limit: %s)",
			res.Windows[0].Active, label, res.Broke, Limit(res).Who)
	}
	w := res.Windows[i]
	s := fmt.Sprintf("capacity: %d players (engine %s, %.0f req/s, %.0f events/s", w.Active, label, w.ServerRequests, eventRate(res, i))
	if l := w.Loop; l.HasLoop() {
		s += fmt.Sprintf(", loop %.0f%%, longest turn %.1f ms", 100*l.Utilization, float64(w.LongestTurnRecent)/float64(time.Millisecond))
	}
	if c := serverCores(w); c != "" {
		s += ", server CPU " + c
	}
	if res.Broke != "" {
		note += "; first to reach its limit: " + Limit(res).Who
	}
	return s + note + ")"
}

// CapacityReport is what make capacity prints before the capacity line: what
// N counts, the figures of the window it was taken in apart from the whole
// run's, what broke and where the run stopped, and which side reached its
// limit first, in sentences.
func CapacityReport(label string, res *loadtest.UsersResult) string {
	if len(res.Windows) == 0 {
		return ""
	}
	var b strings.Builder
	i := len(res.Windows) - 1
	if res.Broke != "" {
		i = res.BrokeAt - 1
	}
	if i >= 0 {
		w := res.Windows[i]
		fmt.Fprintf(&b, "Capacity of %s: N counts the players connected (their scenario running, a live stream open or opening) at the end of "+
			"the last %s window in which every service level held, window %d of %d, at %.0f s: %d; %d had arrived by then.\n",
			label, res.Window, i+1, len(res.Windows), w.At.Seconds(), w.Active, w.Users)
		fmt.Fprintf(&b, "In that window: %s.\n", windowText(res, i))
	}
	if res.Broke != "" {
		e := res.Windows[len(res.Windows)-1]
		fmt.Fprintf(&b, "Broke in window %d, at %.0f s: %s; the run stopped at %.0f s with %d players arrived and %d connected.\n",
			res.BrokeAt+1, res.Windows[res.BrokeAt].At.Seconds(), res.Broke, e.At.Seconds(), e.Users, e.Active)
	}
	fmt.Fprintf(&b, "Over the whole run (%.0f s, every window, those after the break included): %s.\n", res.TimeTaken.Seconds(), runText(res))
	if res.Broke != "" {
		fmt.Fprintf(&b, "First to reach its limit: %s.\n", Limit(res).Why)
	}
	return b.String()
}

// eventRate is the events per second over window i and the one before.
func eventRate(res *loadtest.UsersResult, i int) float64 {
	var events int64
	var length time.Duration
	for _, v := range res.Windows[max(i-1, 0) : i+1] {
		events, length = events+v.Events, length+v.Length
	}
	return float64(events) / max(length.Seconds(), 1e-9)
}

// serverCores is the server's CPU in window w as cores busy, with its CPU
// per request; "" when not measured.
func serverCores(w loadtest.Window) string {
	l := w.Loop
	if l == nil || l.Error != "" || l.CPU <= 0 {
		return ""
	}
	s := fmt.Sprintf("%.2f cores", l.CPU.Seconds()/max(w.Length.Seconds(), 1e-9))
	if per := l.CPUPerRequest(); per > 0 {
		s += fmt.Sprintf(" (%s a request)", usText(per))
	}
	return s
}

// windowText is window i's figures: the server's and the load generator's.
func windowText(res *loadtest.UsersResult, i int) string {
	w := res.Windows[i]
	s := fmt.Sprintf("the server answered %.0f req/s and the streams received %.0f events/s (over this window and the one before: a whole tick)",
		w.ServerRequests, eventRate(res, i))
	if l := w.Loop; l.HasLoop() {
		s += fmt.Sprintf("; the loop was %.0f%% busy, its longest turn of the last 10 to 20 s %.1f ms", 100*l.Utilization,
			float64(w.LongestTurnRecent)/float64(time.Millisecond))
	} else if l != nil && l.Error == "" {
		s += "; no loop figures (a server without an event loop)"
	}
	if c := serverCores(w); c != "" {
		s += "; server CPU " + c
	}
	return s + "; " + clientText(w.ClientCPU, w.Length, w.UserSeconds, w.Events)
}

// runText is the whole run's figures, as windowText's.
func runText(res *loadtest.UsersResult) string {
	s := fmt.Sprintf("%d players arrived, %d events received", res.Users, res.Events)
	if l := res.Loop; l.HasLoop() {
		s += fmt.Sprintf("; the loop %.0f%% busy, its longest turn %.1f ms", 100*l.Utilization, float64(l.LongestTurn)/float64(time.Millisecond))
	}
	if l := res.Loop; l != nil && l.Error == "" && l.CPU > 0 {
		s += fmt.Sprintf("; server CPU %.2f cores", l.CPU.Seconds()/max(res.TimeTaken.Seconds(), 1e-9))
		if per := l.CPUPerRequest(); per > 0 {
			s += fmt.Sprintf(" (%s a request)", usText(per))
		}
	}
	return s + "; " + clientText(res.Client, res.TimeTaken, res.UserSeconds, res.Events)
}

// clientText is the load generator's CPU over a span of length d, in which
// players were connected for us player-seconds and events arrived.
func clientText(c loadtest.ClientCPU, d time.Duration, us float64, events int64) string {
	if !c.Known {
		return "the load generator's CPU unknown (no getrusage here)"
	}
	s := fmt.Sprintf("the load generator's own CPU %.2f of its %s", c.CPU.Seconds()/max(d.Seconds(), 1e-9), c.CoresText())
	if us > 0 {
		s += fmt.Sprintf(", %s per player connected a second", usText(time.Duration(float64(c.CPU)/us)))
	}
	if events > 0 {
		s += fmt.Sprintf(", %s an event", usText(c.CPU/time.Duration(events)))
	}
	return s
}

// usText is a CPU time in microseconds, or milliseconds from 1 ms.
func usText(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1f us", float64(d)/float64(time.Microsecond))
}
