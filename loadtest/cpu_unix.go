//go:build unix

package loadtest

import (
	"syscall"
	"time"
)

// processCPU is the CPU time, user and system, this process has used
// (getrusage(RUSAGE_SELF): every thread's, the exited ones' included);
// false when it cannot be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
