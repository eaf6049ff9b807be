//go:build linux

package gameserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// What Shutdown needs from Linux to stop a listener without resetting the
// connections on their way to it (see Server.Shutdown): a socket filter
// that drops new handshakes, the count of handshakes still under way, and
// how many bytes a connection's socket holds unread. Both back ends use
// them on Linux.

// synDrop is a classic BPF program (socket(7) SO_ATTACH_FILTER) for a TCP
// listening socket: it drops a segment with SYN set and ACK clear (a new
// handshake) and passes everything else, so handshakes under way (their
// final ACK, or the first data under TCP_DEFER_ACCEPT) still complete
// into the accept queue. A TCP socket's filter sees the segment from its
// TCP header on: byte 13 holds the flags.
var synDrop = []unix.SockFilter{
	{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: 13},
	{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0x12}, // SYN|ACK
	{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: 0x02, Jt: 0, Jf: 1},
	{Code: unix.BPF_RET | unix.BPF_K, K: 0},          // a SYN alone: drop
	{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff}, // anything else: keep
}

// refuseSYN attaches synDrop to the listening socket fd. It fails on a
// socket that takes no filter (a Multipath TCP listener, say).
func refuseSYN(fd int) error {
	prog := unix.SockFprog{Len: uint16(len(synDrop)), Filter: &synDrop[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog); err != nil {
		return fmt.Errorf("gameserver: SO_ATTACH_FILTER: %w", err)
	}
	return nil
}

// forgetSYNFilter removes a filter that a server which served the socket
// before (and stopped) left on it, so this server gets new connections.
func forgetSYNFilter(fd int) {
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DETACH_FILTER, 0)
}

// unreadBytes returns how many bytes the receive queue of the connected
// socket fd holds (SIOCINQ, tcp(7)), 0 if it cannot tell.
func unreadBytes(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	if err != nil {
		return 0
	}
	return n
}

// handshaking reports whether a TCP handshake to local port is under
// way: whether a request socket in SYN_RECV (one that may still complete
// into an accept queue) exists for it, in either address family. It asks
// the kernel through sock_diag(7), as ss(8) does, which needs no
// privilege. It counts the handshakes of every socket on the port (others
// sharing it with SO_REUSEPORT too), so it may answer true for longer than
// this listener needs, never shorter.
func handshaking(port int) (bool, error) {
	for _, family := range [...]uint8{unix.AF_INET, unix.AF_INET6} {
		n, err := synRecv(family, port)
		if err != nil || n > 0 {
			return n > 0, err
		}
	}
	return false, nil
}

// Layout of a SOCK_DIAG_BY_FAMILY request (linux/inet_diag.h): a netlink
// header, then struct inet_diag_req_v2. In the answers (struct
// inet_diag_msg), the local port is at diagSport.
const (
	nlmsgLen     = 16
	diagReqLen   = 56
	diagSport    = 4
	diagSynRecv  = 1 << unix.BPF_TCP_SYN_RECV
	diagRecvSize = 16 << 10
)

// synRecv counts the SYN_RECV sockets of family whose local port is port.
func synRecv(family uint8, port int) (int, error) {
	s, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, fmt.Errorf("gameserver: sock_diag socket: %w", err)
	}
	defer unix.Close(s)
	var req [nlmsgLen + diagReqLen]byte
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	req[nlmsgLen] = family
	req[nlmsgLen+1] = unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(req[nlmsgLen+4:], diagSynRecv)
	if err := unix.Sendto(s, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, fmt.Errorf("gameserver: sock_diag request: %w", err)
	}
	buf := make([]byte, diagRecvSize)
	count := 0
	for {
		n, _, err := unix.Recvfrom(s, buf, 0)
		if err != nil {
			return count, fmt.Errorf("gameserver: sock_diag answer: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return count, fmt.Errorf("gameserver: sock_diag answer: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return count, nil
			case unix.NLMSG_ERROR:
				return count, errors.New("gameserver: sock_diag refused the request")
			}
			if len(m.Data) >= diagSport+2 && int(binary.BigEndian.Uint16(m.Data[diagSport:])) == port {
				count++
			}
		}
	}
}
