package gameserver_test

import (
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadHeaderTimeoutFromAccept(t *testing.T) {
	t.Parallel()
	// Ensure a new connection that stays silent, then trickles its header
	// a byte at a time, is closed ReadHeaderTimeout after accept, not
	// after its first byte (net/http's behaviour).
	const timeout = 600 * time.Millisecond
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok"), ReadHeaderTimeout: timeout, IdleTimeout: time.Minute})
	cl := dial(t, addr)
	start := time.Now()
	stop := make(chan struct{})
	go func() {
		select {
		case <-stop:
			return
		case <-time.After(timeout * 3 / 4): // silent for most of the timeout
		}
		for i := 0; ; i++ {
			if _, err := cl.c.Write([]byte{"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: abcdefghijklmnopq"[i%40]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	b, err := readToClose(cl.c, cl.c)
	took := time.Since(start)
	close(stop)
	require.NoError(t, err, "the server kept the trickling connection open")
	assert.Empty(t, string(b))
	assert.GreaterOrEqual(t, took, timeout-50*time.Millisecond)
	// From the first byte it would be closed at 7/4 of the timeout.
	assert.Less(t, took, timeout*3/2, "closed %v after connecting: counted from the first byte", took)
}

func TestReadHeaderTimeoutAfterIdleWait(t *testing.T) {
	t.Parallel()
	// Ensure the next request on a kept-alive connection is timed from
	// its first byte: a wait longer than ReadHeaderTimeout, then a
	// request sent in two parts inside it, is served.
	cl := answeredConn(t, 300*time.Millisecond, time.Minute)
	time.Sleep(500 * time.Millisecond)
	cl.writeAll("GET / HTTP/1.1\r\n")
	time.Sleep(100 * time.Millisecond)
	cl.writeAll("Host: test\r\n\r\n")
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
}

func TestShutdownServesRequestWaitingUnread(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown does not reset an idle keep-alive connection whose
	// next request is already in its socket, unread: it is read, served
	// with "Connection: close", and the connection then closed cleanly.
	// To have the request arrive in the turn in which the drain begins,
	// after that turn read its sockets, a handler on another connection
	// holds the turn while the request is sent and Shutdown is posted.
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", textHandler("ok"))
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "held")
	})
	addr, s := startServer(t, gameserver.Config{Handler: mux})
	idle, holder := dial(t, addr), dial(t, addr)
	for _, cl := range []*client{idle, holder} {
		cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		require.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
	}

	// While a posted function holds the loop, /hold is sent and Shutdown
	// posted: the next turn's wait returns both; /hold's handler holds
	// that turn while the idle connection's request arrives, then the
	// drain begins, in the same turn.
	inBlocker, blocked := make(chan struct{}), make(chan struct{})
	require.NoError(t, s.Post(func() { close(inBlocker); <-blocked }))
	waitClosed(t, inBlocker, "the posted function")
	holder.writeAll("GET /hold HTTP/1.1\r\nHost: test\r\n\r\n")
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(t.Context()) }()
	time.Sleep(100 * time.Millisecond) // Shutdown has posted the drain
	close(blocked)
	waitClosed(t, entered, "the /hold handler")
	idle.writeAll("GET /second HTTP/1.1\r\nHost: test\r\n\r\n")
	time.Sleep(100 * time.Millisecond) // the request is in the server's socket
	close(release)

	resp, body := idle.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	// (The portable back end's reader may hand the request over while
	// /hold runs, before the drain: then it is served as usual, and the
	// connection closes after it all the same.)
	_, err := idle.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "a clean close, not a reset")
	assert.False(t, errors.Is(err, syscall.ECONNRESET))
	_, body = holder.readResponse(http.MethodGet)
	assert.Equal(t, "held", body)
	_, err = holder.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "closed after its response")
	require.NoError(t, <-shut)
}
