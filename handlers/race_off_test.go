//go:build !race

package handlers_test

// raceEnabled is whether the race detector is on (see race_on_test.go).
const raceEnabled = false
