//go:build unix

package handlers_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the test process has used
// so far: on a shared, loaded machine a steadier measure of a handler's cost
// than wall time, which includes waiting for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
