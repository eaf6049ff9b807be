package gameserver

import (
	"context"
	"net"
	"syscall"
)

// ListenOptions are the socket options Listen sets before binding.
type ListenOptions struct {
	// ReusePort sets SO_REUSEPORT, so several sockets, in this process or
	// in others of the same user, may listen on one address at once; the
	// kernel then spreads incoming connections across them by a hash of
	// each connection's addresses and ports (nginx's "listen ...
	// reuseport"). Every socket sharing the address must set it. Closing
	// one of them resets the connections waiting in its accept queue:
	// keep a socket open until no connection can be waiting in it (hand it
	// to the process that replaces its server), or accept its queue empty
	// first. On systems without SO_REUSEPORT, Listen returns an error.
	ReusePort bool
}

// Listen announces on the local network address, as net.Listen does, with
// the socket options of opts set before the socket binds. network must be
// "tcp", "tcp4" or "tcp6"; address is "host:port" (port 0 picks a free one;
// to share a port between sockets, listen on the chosen port again, with
// the same options, once the first Listen returns). The listener it
// returns is a *net.TCPListener over plain TCP, fit for Serve: unlike
// net.Listen it never makes a Multipath TCP socket, which would take no
// socket filter, so that Shutdown can stop new handshakes before it closes
// the listener (see Server.Shutdown). Clients that speak Multipath TCP
// fall back to TCP with it, as with any TCP server.
func Listen(network, address string, opts ListenOptions) (net.Listener, error) {
	lc := net.ListenConfig{}
	lc.SetMultipathTCP(false)
	if opts.ReusePort {
		lc.Control = func(network, address string, c syscall.RawConn) error {
			var soErr error
			if err := c.Control(func(fd uintptr) { soErr = setReusePort(fd) }); err != nil {
				return err
			}
			return soErr
		}
	}
	return lc.Listen(context.Background(), network, address)
}
