//go:build linux && !gameserver_portable

package gameserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestLeftEventOfReusedDescriptor ensures an event a turn left to the next
// is for the connection it was reported for, not its descriptor: once
// that connection has closed and a new one has its descriptor, the left
// event (a hang-up here) is dropped, and the new connection is served.
func TestLeftEventOfReusedDescriptor(t *testing.T) {
	s, addr, _ := startLoop(t, Config{})
	a, abr := dialLoop(t, addr)
	resp, _ := get(t, a, abr, "/a")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	held, gate, reused := make(chan struct{}), make(chan struct{}), make(chan bool, 1)
	require.NoError(t, s.Post(func() {
		close(held)
		<-gate // b's connection and request are in the listener's queue
		l := &s.loop
		var old *conn
		l.sys.each(func(c *conn) { old = c })
		if old == nil {
			reused <- false
			return
		}
		fd := old.fd
		l.closeConn(old) // as a timer or a posted function may after a turn left its event
		l.sys.acceptConns()
		nc := l.sys.conns[fd]
		reused <- nc != nil && nc != old
		l.sys.left = append(l.sys.left, leftEvent{c: old, ev: unix.EPOLLIN | unix.EPOLLHUP, at: l.now})
	}))
	<-held
	b, bbr := dialLoop(t, addr)
	_, err := b.Write([]byte("GET /b1 HTTP/1.1\r\nHost: t\r\n\r\n"))
	require.NoError(t, err)
	close(gate)
	require.True(t, <-reused, "the new connection did not get the closed one's descriptor")
	resp, err = http.ReadResponse(bbr, nil)
	require.NoError(t, err, "the new connection was closed for the old one's hang-up")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp.Body.Close()
	resp, body := get(t, b, bbr, "/b2")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok /b2", body)
}
