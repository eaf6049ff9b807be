//go:build !race

package gameserver_test

// raceEnabled is whether the race detector is on (see race_test.go).
const raceEnabled = false
