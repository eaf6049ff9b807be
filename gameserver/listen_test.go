package gameserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListenReusePort: two sockets share one port only when both set
// ReusePort, and connections reach servers on either.
func TestListenReusePort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_REUSEPORT's spreading is Linux behaviour")
	}
	first, err := gameserver.Listen("tcp", "127.0.0.1:0", gameserver.ListenOptions{ReusePort: true})
	require.NoError(t, err)
	addr := first.Addr().String()
	_, err = gameserver.Listen("tcp", addr, gameserver.ListenOptions{})
	require.Error(t, err, "a socket without SO_REUSEPORT must not share the port")
	second, err := gameserver.Listen("tcp", addr, gameserver.ListenOptions{ReusePort: true})
	require.NoError(t, err)

	seen := map[string]bool{}
	for i, l := range []net.Listener{first, second} {
		name := fmt.Sprint("server", i+1)
		s := gameserver.New(gameserver.Config{Logger: slog.New(slog.DiscardHandler),
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })})
		go s.Serve(l)
		t.Cleanup(func() { s.Close() })
	}
	// The kernel hashes each connection's ports: new connections from new
	// ephemeral ports reach both sockets soon.
	for i := 0; i < 200 && len(seen) < 2; i++ {
		tr := &http.Transport{DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr, Timeout: ioTimeout}).Get("http://" + addr + "/")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen[string(body)] = true
	}
	assert.Equal(t, map[string]bool{"server1": true, "server2": true}, seen)
}

// TestShutdownSharedListener: a server shutting down on a listening socket
// that another process (here, a duplicate descriptor) keeps open stops
// watching it at once, without spinning on connections queued there, and
// those connections wait for the next server on the socket, which serves
// them: how a worker hands its socket over in a graceful restart.
func TestShutdownSharedListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the epoll back end")
	}
	l, err := gameserver.Listen("tcp", "127.0.0.1:0", gameserver.ListenOptions{})
	require.NoError(t, err)
	addr := l.Addr().String()
	f, err := l.(*net.TCPListener).File() // the descriptor the next server gets
	require.NoError(t, err)
	defer f.Close()

	big := strings.Repeat("x", 16<<20)
	old := gameserver.New(gameserver.Config{Logger: slog.New(slog.DiscardHandler), SharedListener: true,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })})
	served := make(chan error, 1)
	go func() { served <- old.Serve(l) }()

	// A client that does not read keeps the old server draining.
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	_, err = io.WriteString(slow, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return old.Stats().Requests == 1 }, ioTimeout, time.Millisecond)

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		stopped <- old.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond)    // the listener is closed on the loop's next turn
	queued, err := net.Dial("tcp", addr) // into the accept queue: nobody accepts it now
	require.NoError(t, err)
	defer queued.Close()
	_, err = io.WriteString(queued, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)

	turns := old.Stats().LoopTurns
	time.Sleep(300 * time.Millisecond)
	assert.Less(t, old.Stats().LoopTurns-turns, uint64(50), "the draining loop must not wake for a socket it no longer accepts on")
	select {
	case <-stopped:
		t.Fatal("Shutdown returned while a response was still draining")
	default:
	}

	next, err := net.FileListener(f)
	require.NoError(t, err)
	s := gameserver.New(gameserver.Config{Logger: slog.New(slog.DiscardHandler),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "next:"+r.URL.Path) })})
	go s.Serve(next)
	defer s.Close()
	require.NoError(t, queued.SetDeadline(time.Now().Add(ioTimeout)))
	resp, err := http.ReadResponse(bufio.NewReader(queued), nil)
	require.NoError(t, err, "the queued connection is served by the next server")
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "next:/next", string(body))

	slow.Close()
	require.NoError(t, <-stopped)
	<-served
}

// TestShutdownServesFreshConnection: a connection accepted just before
// Shutdown, whose request arrives after, is served (with Connection:
// close), not reset: its client could not retry it on another connection.
func TestShutdownServesFreshConnection(t *testing.T) {
	addr, s := startServer(t, gameserver.Config{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "late") })})
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool { return s.Stats().OpenConns == 1 }, ioTimeout, time.Millisecond)
	drained, sent := holdLoopAfterDrain(t, s)
	<-drained
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	close(sent)
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		stopped <- s.Shutdown(ctx) // waits for the drain's end
	}()
	require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "late", string(body))
	assert.True(t, resp.Close, "Connection: close while draining")
	require.NoError(t, <-stopped)
}

// TestAccessLogRemoteAddrFromHandler: the access log's host is the
// RemoteAddr a handler set (a trusted proxy's client), the peer otherwise.
func TestAccessLogRemoteAddrFromHandler(t *testing.T) {
	var log testkit.LogBuffer
	addr, _ := startServer(t, gameserver.Config{AccessLog: &log,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/proxied" {
				r.RemoteAddr = "203.0.113.9:0"
			}
		})})
	cl := dial(t, addr)
	cl.writeAll("GET /proxied HTTP/1.1\r\nHost: test\r\n\r\nGET /direct HTTP/1.1\r\nHost: test\r\n\r\n")
	cl.readRaw(http.MethodGet)
	cl.readRaw(http.MethodGet)
	eventually(t, func() bool { return strings.Count(log.String(), "\n") >= 2 }, "access log: %q", log.String())
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `^203\.0\.113\.9 - - .*"GET /proxied HTTP/1\.1" 200`, lines[0])
	assert.Regexp(t, `^127\.0\.0\.1 - - .*"GET /direct HTTP/1\.1" 200`, lines[1], "the next request on the connection: the peer again")
}
