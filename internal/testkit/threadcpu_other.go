//go:build !linux

package testkit

import "time"

// ThreadCPUTime returns 0, false: a thread's CPU time is read on Linux
// only.
func ThreadCPUTime() (time.Duration, bool) { return 0, false }
