//go:build unix

package gameserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// setReusePort sets SO_REUSEPORT on the socket fd.
func setReusePort(fd uintptr) error {
	return os.NewSyscallError("setsockopt SO_REUSEPORT", unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1))
}
