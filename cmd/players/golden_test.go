package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/loadtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureUsers reads the windows of a real make capacity run (schema
// version 2) into a UsersResult: what the capacity line reads.
func fixtureUsers(t *testing.T, path string) *loadtest.UsersResult {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var env struct {
		Results struct {
			Broke   string `json:"broke"`
			BrokeAt int    `json:"broke_at_window"`
			Windows []struct {
				Active      int     `json:"active"`
				Length      float64 `json:"length_s"`
				Events      int64   `json:"events"`
				Requests    float64 `json:"server_requests_per_second"`
				LongestTurn float64 `json:"longest_turn_recent_ms"`
				Loop        *struct {
					Utilization float64 `json:"utilization"`
					Error       string  `json:"error"`
				} `json:"loop"`
			} `json:"windows"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	res := &loadtest.UsersResult{Broke: env.Results.Broke, BrokeAt: env.Results.BrokeAt}
	for _, w := range env.Results.Windows {
		win := loadtest.Window{Active: w.Active, Length: time.Duration(w.Length * float64(time.Second)), Events: w.Events,
			ServerRequests: w.Requests, LongestTurnRecent: time.Duration(w.LongestTurn*1000+0.5) * time.Microsecond}
		if w.Loop != nil {
			win.Loop = &loadtest.LoopFigures{Utilization: w.Loop.Utilization, Error: w.Loop.Error}
		}
		res.Windows = append(res.Windows, win)
	}
	return res
}

func TestCapacityLineGolden(t *testing.T) {
	// Ensure the capacity line of a real make capacity run is what the
	// command printed for it (scripts/capacity.sh reads it).
	res := fixtureUsers(t, filepath.Join("..", "..", "loadtest", "testdata", "results", "users.json"))
	got := capacityLine("loop", res) + "\n"
	path := filepath.Join("testdata", "capacity.txt")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}
