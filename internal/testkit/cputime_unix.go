//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user plus system, every thread) the
// process has used so far: on a shared, loaded machine a steadier measure
// of what code costs than wall time, which includes waiting for a core.
// It is 0 where the system cannot tell.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
