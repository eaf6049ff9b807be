package testkit

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime returns the CPU time the calling OS thread has used so
// far, and whether the system can tell (Linux: CLOCK_THREAD_CPUTIME_ID).
// Call it on a goroutine locked to its thread (the gameserver loop: from
// a function posted to it); unlike wall time, it does not grow while the
// thread waits for a core on a busy machine.
func ThreadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
