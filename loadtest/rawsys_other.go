//go:build unix && !linux

package loadtest

import "syscall"

func rawRead(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }

func rawWrite(fd int, p []byte) (int, error) { return syscall.Write(fd, p) }
