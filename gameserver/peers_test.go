package gameserver_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
)

// dialFrom is dial from the loopback address local (any 127.0.0.0/8
// address is local on Linux), a client at another address.
func dialFrom(t testing.TB, local, addr string) *client {
	t.Helper()
	d := net.Dialer{Timeout: ioTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c.(*net.TCPConn), br: bufio.NewReader(c)}
}

func TestMaxConnsPerAddr(t *testing.T) {
	t.Parallel()
	const req = "GET / HTTP/1.1\r\nHost: test\r\n\r\n"
	t.Run("Default", func(t *testing.T) {
		t.Parallel()
		// Ensure one address holding half-sent headers on as many
		// connections as it may (by default a quarter of MaxConns 8: 2)
		// has its next connection closed at once, unread, while another
		// address is served, and that it may connect again once one of
		// its connections closes.
		addr, s := startServer(t, gameserver.Config{Handler: textHandler("ok"), MaxConns: 8})
		var held []*client
		for range 2 {
			cl := dialFrom(t, "127.0.0.1", addr)
			cl.writeAll("GET / HTTP/1.1\r\nHo")
			held = append(held, cl)
		}
		eventually(t, func() bool { return s.Stats().OpenConns == 2 }, "the held connections are not open")
		over := dialFrom(t, "127.0.0.1", addr)
		over.c.Write([]byte(req)) // may fail: the server may have closed
		assert.Empty(t, over.readUntilEOF(), "a connection over the address's cap was served")
		eventually(t, func() bool { return s.Stats().RejectedConns == 1 }, "RejectedConns")

		other := dialFrom(t, "127.0.0.2", addr)
		other.writeAll(req)
		assert.Equal(t, okText("ok"), normalize(other.readRaw(http.MethodGet)), "another address was not served")

		// Stats may lag a turn: see the other address counted (3) before
		// the close is looked for (2), or a stale 2 passes for it.
		eventually(t, func() bool { return s.Stats().OpenConns == 3 }, "the other address's connection is not counted")
		require.NoError(t, held[0].c.Close())
		eventually(t, func() bool { return s.Stats().OpenConns == 2 }, "the closed connection is still counted")
		again := dialFrom(t, "127.0.0.1", addr)
		again.writeAll(req)
		assert.Equal(t, okText("ok"), normalize(again.readRaw(http.MethodGet)), "the address was not served again")
		assert.Equal(t, uint64(1), s.Stats().RejectedConns)
	})
	t.Run("Off", func(t *testing.T) {
		t.Parallel()
		// Ensure a negative MaxConnsPerAddr lets one address take every
		// connection MaxConns allows, as behind a reverse proxy.
		addr, s := startServer(t, gameserver.Config{Handler: textHandler("ok"), MaxConns: 4, MaxConnsPerAddr: -1})
		for range 4 {
			cl := dialFrom(t, "127.0.0.1", addr)
			cl.writeAll(req)
			assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
		}
		assert.Zero(t, s.Stats().RejectedConns)
	})
	t.Run("WithoutMaxConns", func(t *testing.T) {
		t.Parallel()
		// Ensure a positive MaxConnsPerAddr caps an address with no
		// MaxConns cap.
		addr, s := startServer(t, gameserver.Config{Handler: textHandler("ok"), MaxConnsPerAddr: 1})
		first := dialFrom(t, "127.0.0.1", addr)
		first.writeAll(req)
		assert.Equal(t, okText("ok"), normalize(first.readRaw(http.MethodGet)))
		over := dialFrom(t, "127.0.0.1", addr)
		over.c.Write([]byte(req))
		assert.Empty(t, over.readUntilEOF(), "a second connection from the address was served")
		eventually(t, func() bool { return s.Stats().RejectedConns == 1 }, "RejectedConns")
	})
}
