//go:build !unix

package main

// fdLimit returns 0 (unknown) where there is no RLIMIT_NOFILE.
func fdLimit() int { return 0 }
