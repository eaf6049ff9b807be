//go:build linux && !gameserver_portable

package gameserver

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// poller is the loop's view of epoll: one epoll instance, level-triggered,
// plus an eventfd that other goroutines write to wake the loop (see wake).
// Level-triggered interest keeps the loop simple and fair: a connection that
// still has input or writable space after its turn is simply reported again
// on the next epoll_wait, so the loop never has to drain a socket to EAGAIN.
type poller struct {
	epfd   int
	wakefd int
	events []unix.EpollEvent
}

// maxEvents is how many readiness events one epoll_wait returns.
const maxEvents = 256

// open creates the epoll instance and the wake-up eventfd.
func (p *poller) open() error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("gameserver: epoll_create1: %w", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return fmt.Errorf("gameserver: eventfd: %w", err)
	}
	p.epfd, p.wakefd = epfd, wakefd
	p.events = make([]unix.EpollEvent, maxEvents)
	if err := p.add(wakefd, unix.EPOLLIN); err != nil {
		p.close()
		return err
	}
	return nil
}

// close releases the epoll instance and the eventfd.
func (p *poller) close() {
	unix.Close(p.wakefd)
	unix.Close(p.epfd)
}

// add registers fd with the given interest.
func (p *poller) add(fd int, events uint32) error {
	if err := p.ctl(unix.EPOLL_CTL_ADD, fd, events); err != nil {
		return fmt.Errorf("gameserver: epoll_ctl add fd %d: %w", fd, err)
	}
	return nil
}

// mod changes fd's interest.
func (p *poller) mod(fd int, events uint32) error {
	if err := p.ctl(unix.EPOLL_CTL_MOD, fd, events); err != nil {
		return fmt.Errorf("gameserver: epoll_ctl mod fd %d: %w", fd, err)
	}
	return nil
}

// ctl is epoll_ctl, which never blocks: a raw system call (see wait).
func (p *poller) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	_, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(p.epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// wait blocks until an event or for msec milliseconds (-1: no limit) and
// returns the ready events, which are valid until the next call.
//
// It first polls without blocking, as a raw system call: while the server
// is busy, events are usually ready, and the Go scheduler never sees the
// loop's thread enter a system call, so it does not hand the loop's P to
// another thread and wake one to take it back. Only when nothing is ready
// does the loop block, telling the scheduler so.
func (p *poller) wait(msec int) ([]unix.EpollEvent, error) {
	r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.events[0])), uintptr(len(p.events)), 0, 0, 0)
	if errno == 0 && (r > 0 || msec == 0) {
		return p.events[:r], nil
	}
	for {
		n, err := unix.EpollWait(p.epfd, p.events, msec)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("gameserver: epoll_wait: %w", err)
		}
		return p.events[:n], nil
	}
}

// wake makes a concurrent or later wait return. Safe from any goroutine.
func (p *poller) wake() {
	var one = [8]byte{1}
	// EAGAIN means the counter is already huge, so the loop is awake anyway.
	unix.Write(p.wakefd, one[:])
}

// The loop's reads, writes and closes are on non-blocking descriptors and
// never block, so they are raw system calls too (see wait).

func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWritev(fd int, iov []unix.Iovec) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// rawAccept4 accepts a connection, non-blocking and close-on-exec, with its
// peer address in sa. (x/sys/unix's Accept4 costs a getsockopt per
// connection and an allocation.)
func rawAccept4(lfd int, sa *unix.RawSockaddrAny) (int, *unix.RawSockaddrAny, error) {
	n := uint32(unix.SizeofSockaddrAny)
	fd, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(sa)), uintptr(unsafe.Pointer(&n)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, nil, errno
	}
	return int(fd), sa, nil
}

func rawClose(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// drainWake resets the eventfd after it was reported readable.
func (p *poller) drainWake() {
	var buf [8]byte
	unix.Read(p.wakefd, buf[:])
}
