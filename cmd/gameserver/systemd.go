//go:build unix

package main

// systemd's two protocols, in the few lines they take (sd_notify(3) and
// sd_listen_fds(3)); coreos/go-systemd's daemon and activation packages
// would bring the same lines and a dependency.

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The environment systemd sets.
const (
	notifySocketEnv = "NOTIFY_SOCKET" // Type=notify: where to send state changes
	listenPIDEnv    = "LISTEN_PID"    // socket activation: the process the sockets are for
	listenFDsEnv    = "LISTEN_FDS"    // ... and how many, from listenFDsStart
	listenNamesEnv  = "LISTEN_FDNAMES"
	listenFDsStart  = 3
)

// sdNotify sends state, newline-separated VAR=value lines such as
// "READY=1", to systemd's notification socket (NOTIFY_SOCKET, a unixgram
// socket; "@" at its start means the abstract namespace). Without
// NOTIFY_SOCKET it does nothing and returns nil: the program was not started
// by systemd with Type=notify.
func sdNotify(state string) error {
	path := os.Getenv(notifySocketEnv)
	if path == "" {
		return nil
	}
	if path[0] == '@' {
		path = "\x00" + path[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("%s: %w", notifySocketEnv, err)
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}

// reloadingState is the notification that a reload begins: RELOADING=1
// with the time, on CLOCK_MONOTONIC in microseconds, that systemd
// (Type=notify-reload, and 253 on for any Type=notify) wants beside it.
func reloadingState() string {
	var ts syscall.Timespec
	clockMonotonic(&ts)
	usec := ts.Nano() / int64(time.Microsecond)
	return "RELOADING=1\nMONOTONIC_USEC=" + strconv.FormatInt(usec, 10)
}

// systemdListener returns the listening socket systemd passed this
// process (socket activation: LISTEN_PID is ours and LISTEN_FDS is 1,
// the socket on descriptor 3), or nil if it passed none. It unsets the
// variables either way, so that no child takes them for its own. More
// than one socket, or one that is not a TCP listener, is an error.
func systemdListener() (*os.File, error) {
	pid, fds := os.Getenv(listenPIDEnv), os.Getenv(listenFDsEnv)
	os.Unsetenv(listenPIDEnv)
	os.Unsetenv(listenFDsEnv)
	os.Unsetenv(listenNamesEnv)
	if fds == "" || pid != strconv.Itoa(os.Getpid()) {
		return nil, nil
	}
	n, err := strconv.Atoi(fds)
	switch {
	case err != nil || n < 0:
		return nil, fmt.Errorf("%s=%q: want a number of sockets", listenFDsEnv, fds)
	case n == 0:
		return nil, nil
	case n > 1:
		return nil, fmt.Errorf("%s=%d: the game serves one socket; give the .socket unit one ListenStream", listenFDsEnv, n)
	}
	unix.CloseOnExec(listenFDsStart)
	f := os.NewFile(listenFDsStart, "systemd socket")
	if typ, err := unix.GetsockoptInt(listenFDsStart, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_STREAM {
		f.Close()
		return nil, fmt.Errorf("%s: descriptor %d is not a stream socket", listenFDsEnv, listenFDsStart)
	}
	if acc, err := unix.GetsockoptInt(listenFDsStart, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || acc != 1 {
		f.Close()
		return nil, fmt.Errorf("%s: descriptor %d is not listening", listenFDsEnv, listenFDsStart)
	}
	return f, nil
}

// clockMonotonic reads CLOCK_MONOTONIC, the clock of MONOTONIC_USEC.
func clockMonotonic(ts *syscall.Timespec) error {
	var u unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &u); err != nil {
		return err
	}
	*ts = syscall.Timespec(u)
	return nil
}
