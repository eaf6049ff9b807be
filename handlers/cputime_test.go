package handlers_test

import (
	"time"

	"github.com/statesecrets/server/internal/testkit"
)

// processCPU returns the CPU time (user + system) the test process has used
// so far (testkit.CPUTime): on a shared, loaded machine a steadier measure
// of a handler's cost than wall time, which includes waiting for a core.
func processCPU() time.Duration { return testkit.CPUTime() }
