//go:build linux && gameserver_portable

package gameserver

import "golang.org/x/sys/unix"

// Only the portable back end asks how long the accept queue is: the epoll
// back end accepts until EAGAIN at Shutdown (see backend_linux.go).

// acceptQueueLen returns how many connections wait in the accept queue
// of the listening socket fd, 0 if it cannot tell: for a listener, Linux
// fills tcp_info's tcpi_unacked with the accept backlog (what ss(8)
// shows as Recv-Q).
func acceptQueueLen(fd int) int {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0
	}
	return int(info.Unacked)
}
