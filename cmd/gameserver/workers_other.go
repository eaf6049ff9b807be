//go:build !linux

package main

import "syscall"

// workerProcAttr: elsewhere a worker stays in the supervisor's process group.
func workerProcAttr() *syscall.SysProcAttr { return nil }
