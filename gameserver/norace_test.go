//go:build !race

package gameserver_test

import "time"

// raceEnabled is whether the race detector is on (see race_test.go).
const raceEnabled = false

// probeBound is the p99 latency a static probe must stay under while the
// server is under attack or working: 100 ms, generous beside the 20 ms the
// benchmarks show (BenchmarkGoProbe), because the machine is shared and
// other packages' tests run beside these; 250 ms under the race detector,
// which slows every request several times over (see race_test.go). Either
// is far below what a blocked loop costs (seconds).
const probeBound = 100 * time.Millisecond
