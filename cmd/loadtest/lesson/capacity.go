package lesson

import (
	"fmt"
	"time"

	"github.com/statesecrets/server/loadtest"
)

// Capacity is make capacity's line on a run of cmd/players ramped until a
// service level broke (UsersConfig.StopWhen), label naming the server's
// engine: the players connected at the end of the last window that held
// every -stop-when threshold, with that
// window's request rate and loop figures. Its event rate is over that
// window and the one before: a tick fans out to every stream at once, so
// one 5 s window of a 10 s tick counts either thousands of events a
// second or a few dozen.
func Capacity(label string, res *loadtest.UsersResult) string {
	if len(res.Windows) == 0 {
		return fmt.Sprintf("capacity: unknown (engine %s: the run ended before its first window)", label)
	}
	i, note := len(res.Windows)-1, ", held to the end of the ramp: the capacity is higher"
	if res.Broke != "" {
		i, note = res.BrokeAt-1, ", then "+res.Broke
	}
	if i < 0 {
		return fmt.Sprintf("capacity: under %d players (engine %s: %s in the first window)", res.Windows[0].Active, label, res.Broke)
	}
	w := res.Windows[i]
	var events int64
	var length time.Duration
	for _, v := range res.Windows[max(i-1, 0) : i+1] {
		events, length = events+int64(v.Events), length+v.Length
	}
	sec := max(length.Seconds(), 1e-9)
	util, turn := "n/a", "n/a"
	if w.Loop != nil && w.Loop.Error == "" {
		util = fmt.Sprintf("%.0f%%", 100*w.Loop.Utilization)
		turn = fmt.Sprintf("%.1f ms", float64(w.LongestTurnRecent)/float64(time.Millisecond))
	}
	return fmt.Sprintf("capacity: %d players (engine %s, %.0f req/s, %.0f events/s, loop %s, longest turn %s%s)",
		w.Active, label, w.ServerRequests, float64(events)/sec, util, turn, note)
}
