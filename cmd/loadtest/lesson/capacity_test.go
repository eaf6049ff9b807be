package lesson_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
	"github.com/statesecrets/server/loadtest"
)

func TestCapacity(t *testing.T) {
	// Ensure the capacity line names the players of the last window that
	// held, with that window's figures (events over it and the one
	// before), what broke after it and who reached its limit first.
	res := &loadtest.UsersResult{Broke: "page.p99<=50ms (page: 80.00 ms)", BrokeAt: 2, Windows: []loadtest.Window{
		{Active: 100, Length: 5e9, Events: 500, ServerRequests: 40, Loop: &loadtest.LoopFigures{Utilization: 0.2}},
		{Active: 200, Length: 5e9, Events: 1000, ServerRequests: 80, LongestTurnRecent: 12e6,
			Loop: &loadtest.LoopFigures{Utilization: 0.4, CPU: 2 * time.Second, Requests: 400}},
		{Active: 300, Length: 5e9, Loop: &loadtest.LoopFigures{Utilization: 0.5, CPU: 2500 * time.Millisecond}},
	}}
	assert.Equal(t, "capacity: 200 players (engine loop, 80 req/s, 150 events/s, loop 40%, longest turn 12.0 ms, "+
		"server CPU 0.40 cores (5.00 ms a request), then page.p99<=50ms (page: 80.00 ms); first to reach its limit: the server)",
		lesson.Capacity("loop", res))

	t.Run("NoLoop", func(t *testing.T) {
		// Ensure a server without an event loop gets no loop columns:
		// not "loop 0%, longest turn 0.0 ms".
		res := &loadtest.UsersResult{BrokeAt: -1, Windows: []loadtest.Window{{Active: 50, Length: 5e9, Events: 10,
			Loop: &loadtest.LoopFigures{CPU: 4 * time.Second, Requests: 1000}}}}
		assert.Equal(t, "capacity: 50 players (engine nethttp, 0 req/s, 2 events/s, server CPU 0.80 cores (4.00 ms a request), "+
			"held to the end of the ramp: the capacity is higher)", lesson.Capacity("nethttp", res))
	})
	t.Run("BrokeFirst", func(t *testing.T) {
		// Ensure a run that broke in its first window gives a bound.
		res := &loadtest.UsersResult{Broke: "errors==0 (page: 3)", BrokeAt: 0, Windows: []loadtest.Window{{Active: 7}}}
		assert.Equal(t, "capacity: under 7 players (engine loop: errors==0 (page: 3) in the first window; first to reach its limit: the server)",
			lesson.Capacity("loop", res))
	})
	t.Run("NoWindow", func(t *testing.T) {
		// Ensure a run that ended before its first window says so.
		assert.Equal(t, "capacity: unknown (engine loop: the run ended before its first window)",
			lesson.Capacity("loop", &loadtest.UsersResult{}))
	})
}

// broken is a run that held one window and broke in the next, w.
func broken(w loadtest.Window) *loadtest.UsersResult {
	w.Length, w.Active = 5*time.Second, 300
	return &loadtest.UsersResult{Broke: "page.p99<=50ms (page: 80.00 ms)", BrokeAt: 1, Windows: []loadtest.Window{
		{Active: 200, Length: 5 * time.Second}, w}}
}

func TestLimit(t *testing.T) {
	// Ensure the verdict names who reached its limit first, from the
	// window that broke, and the figures it rests on.
	// client is cpu over broken's 5 s windows, of 1 core.
	client := func(cpu time.Duration) loadtest.ClientCPU {
		return loadtest.ClientCPU{CPU: cpu, Cores: 1, Known: true, Share: cpu.Seconds() / 5}
	}
	for _, tc := range []struct {
		name, who, why string
		res            *loadtest.UsersResult
	}{
		{"the load generator's CPU full", "the load generator", "its own CPU was 96% of its 1 core",
			broken(loadtest.Window{ClientCPU: client(4800 * time.Millisecond), Loop: &loadtest.LoopFigures{Utilization: 0.3, CPU: 1500 * time.Millisecond}})},
		{"the loop busy without a CPU", "the machine", "the loop was busy 4500 ms but the whole server had a CPU 1500 ms",
			broken(loadtest.Window{ClientCPU: client(time.Second), Loop: &loadtest.LoopFigures{Utilization: 0.9, CPU: 1500 * time.Millisecond}})},
		{"the loop's CPU full", "the server", "its loop was 95% busy, its CPU the limit (the load generator at 20% of its cores)",
			broken(loadtest.Window{ClientCPU: client(time.Second), Loop: &loadtest.LoopFigures{Utilization: 0.95, CPU: 4900 * time.Millisecond}})},
		{"a long turn", "the server", "its loop was 50% busy, its longest turn 60.0 ms: not its CPU",
			broken(loadtest.Window{ClientCPU: client(time.Second), LongestTurnRecent: 60 * time.Millisecond,
				Loop: &loadtest.LoopFigures{Utilization: 0.5, CPU: 2600 * time.Millisecond}})},
		{"net/http", "the server", "it used 0.98 cores of CPU, no loop figures",
			broken(loadtest.Window{ClientCPU: client(time.Second), Loop: &loadtest.LoopFigures{CPU: 4900 * time.Millisecond}})},
		{"the client's CPU unknown", "the server", "the load generator's CPU unknown",
			broken(loadtest.Window{Loop: &loadtest.LoopFigures{CPU: 4900 * time.Millisecond}})},
	} {
		v := lesson.Limit(tc.res)
		assert.Equal(t, tc.who, v.Who, tc.name)
		assert.Contains(t, v.Why, tc.why, tc.name)
	}

	t.Run("Late", func(t *testing.T) {
		// Ensure a load generator that ran late while not busy points at
		// the machine.
		res := broken(loadtest.Window{ClientCPU: client(2 * time.Second), Loop: &loadtest.LoopFigures{Utilization: 0.5, CPU: 2600 * time.Millisecond}})
		res.Steps = []loadtest.StepResult{{Name: "page", LatenessP99: 80 * time.Millisecond}}
		v := lesson.Limit(res)
		assert.Equal(t, "the machine", v.Who)
		assert.Contains(t, v.Why, "late by 80.00 ms at p99")
	})
	t.Run("Held", func(t *testing.T) {
		// Ensure a run that never broke has no limit to name.
		assert.Equal(t, "none", lesson.Limit(&loadtest.UsersResult{BrokeAt: -1}).Who)
	})
}

func TestCapacityReport(t *testing.T) {
	// Ensure the report before the capacity line says what N counts, the
	// users that arrived and were connected when it stopped, and the
	// window's figures apart from the whole run's, the load generator's
	// own CPU per player and per event among them.
	res := broken(loadtest.Window{Users: 320, Events: 900, ClientCPU: loadtest.ClientCPU{CPU: time.Second, Cores: 1, Known: true, Share: 0.2},
		UserSeconds: 1250, Loop: &loadtest.LoopFigures{Utilization: 0.5, CPU: 2600 * time.Millisecond, Requests: 1300}})
	res.Windows[0].Users, res.Windows[0].Events, res.Windows[0].UserSeconds = 210, 100, 500
	res.Windows[0].ClientCPU = loadtest.ClientCPU{CPU: 500 * time.Millisecond, Cores: 1, Known: true, Share: 0.1}
	res.Window, res.TimeTaken, res.Users, res.Events, res.UserSeconds = 5*time.Second, 10*time.Second, 320, 1000, 1750
	res.Client = loadtest.ClientCPU{CPU: 1500 * time.Millisecond, Cores: 1, Known: true, Share: 0.15}
	text := lesson.CapacityReport("loop", res)
	for _, want := range []string{
		"N counts the players connected (their scenario running, a live stream open or opening) at the end of the last 5s window " +
			"in which every service level held, window 1 of 2, at 0 s: 200; 210 had arrived by then.\n",
		// 0.5 s over 5 s; (0+200)/2*5 = 500 player-seconds (UserSeconds); 100 events.
		"the load generator's own CPU 0.10 of its 1 core, 1.00 ms per player connected a second, 5.00 ms an event.\n",
		"Broke in window 2, at 0 s: page.p99<=50ms (page: 80.00 ms); the run stopped at 0 s with 320 players arrived and 300 connected.\n",
		// 1.5 s over 10 s; 500 + (200+300)/2*5 = 1750 player-seconds; 1000 events.
		"Over the whole run (10 s, every window, those after the break included): 320 players arrived, 1000 events received; " +
			"the load generator's own CPU 0.15 of its 1 core, 857.1 us per player connected a second, 1.50 ms an event.\n",
		"First to reach its limit: the server: its loop was 50% busy, its longest turn 0.0 ms: not its CPU but what waited in it, " +
			"a long turn or the pace of the fan-out (the load generator at 20% of its cores)",
	} {
		assert.Contains(t, text, want)
	}
}
