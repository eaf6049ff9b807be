package handlers_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

func TestLiveStreamsFull(t *testing.T) {
	// Ensure a stream over the server's stream cap (gameserver.Config.MaxStreams,
	// three quarters of MaxConns 8: 6) is answered 503 with Retry-After and
	// its connection closed, so refused streams kept alive cannot fill the
	// connection cap; and that a page request is still served then.
	e := newEnv(t)
	addr, srv := serveGameserver(t, e.srv, nil, gameserver.Config{MaxConns: 8, MaxConnsPerAddr: -1})
	open := func(tid string) (net.Conn, *bufio.Reader, *http.Response) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /game/events?tid=%s HTTP/1.1\r\nHost: %s\r\n\r\n", tid, addr)
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		return c, br, resp
	}
	for i := range 6 {
		_, tid := e.player(fmt.Sprintf("agent%d", i), game.FBI)
		_, _, resp := open(tid)
		require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d", i)
	}
	require.Eventually(t, func() bool { return srv.Stats().Streams == 6 }, 10*time.Second, time.Millisecond)

	_, tid := e.player("agent6", game.FBI)
	_, br, resp := open(tid)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "30", resp.Header.Get("Retry-After"))
	assert.True(t, resp.Close, "the refused stream's connection is closed")
	body, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(body), "live streams")
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the connection")

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	page, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, page.StatusCode, "a page request is served while the streams are full")
}
