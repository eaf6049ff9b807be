//go:build race

package handlers_test

// raceEnabled is whether the race detector is on: it slows bcrypt about
// fifteen times, so tests that need a hash of a given length pick a lower
// cost under it (see fairnessCost).
const raceEnabled = true
