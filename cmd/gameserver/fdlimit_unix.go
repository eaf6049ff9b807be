//go:build unix

package main

import "syscall"

// fdLimit returns the process's open-file limit (the soft RLIMIT_NOFILE,
// which the Go runtime raises to the hard limit at start), or 0.
func fdLimit() int {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
