package lesson_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/cmd/loadtest/lesson"
	"github.com/statesecrets/server/loadtest"
)

func TestCapacity(t *testing.T) {
	// Ensure the capacity line names the players of the last window that
	// held, with that window's figures (events over it and the one
	// before), and what broke after it.
	res := &loadtest.UsersResult{Broke: "page.p99<=50ms (page: 80.00 ms)", BrokeAt: 2, Windows: []loadtest.Window{
		{Active: 100, Length: 5e9, Events: 500, ServerRequests: 40, Loop: &loadtest.LoopFigures{Utilization: 0.2}},
		{Active: 200, Length: 5e9, Events: 1000, ServerRequests: 80, LongestTurnRecent: 12e6, Loop: &loadtest.LoopFigures{Utilization: 0.4}},
		{Active: 300},
	}}
	assert.Equal(t, "capacity: 200 players (engine loop, 80 req/s, 150 events/s, loop 40%, longest turn 12.0 ms, then page.p99<=50ms (page: 80.00 ms))",
		lesson.Capacity("loop", res))

	t.Run("Held", func(t *testing.T) {
		// Ensure a ramp that never broke says its capacity is higher.
		res := &loadtest.UsersResult{BrokeAt: -1, Windows: []loadtest.Window{{Active: 50, Length: 5e9, Events: 10}}}
		assert.Equal(t, "capacity: 50 players (engine nethttp, 0 req/s, 2 events/s, loop n/a, longest turn n/a, held to the end of the ramp: the capacity is higher)",
			lesson.Capacity("nethttp", res))
	})
	t.Run("BrokeFirst", func(t *testing.T) {
		// Ensure a run that broke in its first window gives a bound.
		res := &loadtest.UsersResult{Broke: "errors==0 (page: 3)", BrokeAt: 0, Windows: []loadtest.Window{{Active: 7}}}
		assert.Equal(t, "capacity: under 7 players (engine loop: errors==0 (page: 3) in the first window)", lesson.Capacity("loop", res))
	})
	t.Run("NoWindow", func(t *testing.T) {
		// Ensure a run that ended before its first window says so.
		assert.Equal(t, "capacity: unknown (engine loop: the run ended before its first window)",
			lesson.Capacity("loop", &loadtest.UsersResult{}))
	})
}
