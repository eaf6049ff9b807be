//go:build linux && !gameserver_portable

package gameserver

import (
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// epollEntries counts the descriptors in s's epoll set, from
// /proc/self/fdinfo (one "tfd:" line each).
func epollEntries(t *testing.T, s *Server) int {
	t.Helper()
	epfd := make(chan int, 1)
	require.NoError(t, s.Post(func() { epfd <- s.loop.sys.poll.epfd }))
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(<-epfd))
	require.NoError(t, err)
	return strings.Count(string(b), "tfd:")
}

func TestDeferHangupLeavesEpoll(t *testing.T) {
	// Ensure the descriptor of a client that hangs up while its response
	// is deferred leaves the epoll set at once: left there, level-triggered,
	// its EPOLLHUP or EPOLLRDHUP would come back every turn.
	got := make(chan *Deferred, 1)
	s, addr, _ := startLoop(t, Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := Defer(w)
		got <- d
	})})
	base := epollEntries(t, s) // the eventfd and the listener
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	require.NoError(t, err)
	d := <-got
	assert.Equal(t, base+1, epollEntries(t, s))
	turns := s.Stats().LoopTurns
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return epollEntries(t, s) == base }, waitLimit, 10*time.Millisecond,
		"the hung-up descriptor is still in the epoll set")
	assert.Nil(t, d.w, "the deferred response was dropped with its connection")
	time.Sleep(200 * time.Millisecond)
	assert.Less(t, s.Stats().LoopTurns-turns, uint64(50), "the loop spins after the hang-up")
}
