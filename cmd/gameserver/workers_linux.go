package main

import "syscall"

// workerProcAttr puts a worker in its own process group, so a terminal's ^C
// reaches the supervisor only, which stops the workers in order, and has
// the kernel send it SIGTERM should the supervisor die without doing so.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
