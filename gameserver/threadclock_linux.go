//go:build linux && !gameserver_portable

package gameserver

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadClock reads the scheduler's account of the loop's OS thread from
// /proc/thread-self/schedstat (Documentation/scheduler/sched-stats.rst):
// its first field is the time the thread ran on a CPU, its second the
// time it was runnable but waiting for one (run-queue delay, preemption
// included), both in nanoseconds. The file is opened on the loop's
// thread, which the loop never leaves, and read with one pread per
// sample: about a microsecond, which is why the loop samples turns
// rather than requests (see waitAttrib).
type threadClock struct {
	fd  int
	buf [96]byte
}

// open opens the calling thread's schedstat and reports whether it can
// be read; it runs on the loop's thread.
func (t *threadClock) open() bool {
	fd, err := unix.Open("/proc/thread-self/schedstat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.fd = -1
		return false
	}
	t.fd = fd
	if _, ok := t.read(); !ok {
		t.close()
		return false
	}
	return true
}

// read returns the thread's figures now.
func (t *threadClock) read() (threadSample, bool) {
	if t.fd < 0 {
		return threadSample{}, false
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(t.fd), uintptr(unsafe.Pointer(&t.buf[0])), uintptr(len(t.buf)), 0, 0, 0)
	if errno != 0 {
		return threadSample{}, false
	}
	p := t.buf[:n]
	cpu, p, ok1 := parseField(p)
	delay, _, ok2 := parseField(p)
	return threadSample{cpu: cpu, delay: delay}, ok1 && ok2
}

// close closes the file.
func (t *threadClock) close() {
	if t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
}

// parseField parses the decimal number at the start of p, after any
// spaces, and returns it with the rest of p.
func parseField(p []byte) (int64, []byte, bool) {
	for len(p) > 0 && p[0] == ' ' {
		p = p[1:]
	}
	var v int64
	i := 0
	for ; i < len(p) && p[i] >= '0' && p[i] <= '9'; i++ {
		v = v*10 + int64(p[i]-'0')
	}
	return v, p[i:], i > 0
}
