//go:build race

package gameserver_test

import "time"

// raceEnabled is whether the race detector is on: its shadow memory makes
// the process's RSS no measure of the server's own memory.
const raceEnabled = true

// probeBound: see norace_test.go.
const probeBound = 250 * time.Millisecond
