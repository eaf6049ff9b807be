package loadtest

import (
	"syscall"
	"unsafe"
)

// rawRead and rawWrite are read(2) and write(2) without the runtime's
// entersyscall/exitsyscall: on a non-blocking socket they never block, and
// skipping the bookkeeping keeps the scheduler from handing this goroutine's
// P to another thread (a futex wake and a context switch) when the kernel
// spends a few microseconds on loopback TCP inside the call.
func rawRead(fd int, p []byte) (int, error) { return rawIO1(syscall.SYS_READ, fd, p) }

func rawWrite(fd int, p []byte) (int, error) { return rawIO1(syscall.SYS_WRITE, fd, p) }

// rawIO1 makes one read or write system call on p.
func rawIO1(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
