//go:build unix

package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

// fakeSystemd is what systemd gives a service: a listening socket (socket
// activation) and a notification socket (Type=notify).
type fakeSystemd struct {
	ln     net.Listener // the .socket unit's: held across service restarts
	file   *os.File
	notify *net.UnixConn
	path   string
}

func newFakeSystemd(t *testing.T) *fakeSystemd {
	t.Helper()
	ln, err := gameserver.Listen("tcp", "127.0.0.1:0", gameserver.ListenOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	f, err := ln.(*net.TCPListener).File()
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	path := filepath.Join(t.TempDir(), "notify")
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &fakeSystemd{ln: ln, file: f, notify: nc, path: path}
}

// start runs the program with args as systemd would: the socket on
// descriptor 3, LISTEN_FDS=1, LISTEN_PID its own pid (set by a shell
// that then execs the program, keeping its pid), NOTIFY_SOCKET.
func (s *fakeSystemd) start(t *testing.T, args ...string) (*exec.Cmd, *testkit.LogBuffer) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, exe, "-db", filepath.Join(t.TempDir(), "ss.db")}, args...)...)
	cmd.Env = append(os.Environ(), testMainEnv+"=1", "LISTEN_FDS=1", "LISTEN_FDNAMES=statesecrets", notifySocketEnv+"="+s.path)
	cmd.ExtraFiles = []*os.File{s.file}
	stderr := &testkit.LogBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("log:\n%s", stderr)
		}
	})
	return cmd, stderr
}

// next returns the next notification, waiting up to 60 s.
func (s *fakeSystemd) next(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 4096)
	s.notify.SetReadDeadline(time.Now().Add(60 * time.Second))
	n, err := s.notify.Read(buf)
	require.NoError(t, err, "no notification")
	return string(buf[:n])
}

func (s *fakeSystemd) base() string { return "http://" + s.ln.Addr().String() }

// TestSocketActivation: given a listening socket as systemd passes it, the
// server serves on it (not on -addr), says READY=1 once it does and
// STOPPING=1 when it stops; a client connecting between a stop and the
// next start waits in the socket's backlog and is served by the next
// process (so systemctl restart refuses no connection).
func TestSocketActivation(t *testing.T) {
	t.Parallel()
	sd := newFakeSystemd(t)
	cmd, stderr := sd.start(t, "-addr", "127.0.0.1:1")
	assert.Equal(t, "READY=1", sd.next(t))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "msg=serving addr="+sd.ln.Addr().String()) },
		10*time.Second, 10*time.Millisecond, "serving on systemd's socket, not -addr")
	resp, _ := get(t, sd.base()+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, "STOPPING=1", sd.next(t))
	require.NoError(t, cmd.Wait())

	between := make(chan error, 1)
	go func() { // no process serves: the connection waits in the backlog
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(sd.base() + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = &url500{resp.StatusCode}
			}
		}
		between <- err
	}()
	time.Sleep(100 * time.Millisecond)
	sd.start(t)
	assert.Equal(t, "READY=1", sd.next(t))
	select {
	case err := <-between:
		assert.NoError(t, err, "the request made while no process ran")
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the waiting request was never served")
	}
}

type url500 struct{ status int }

func (e *url500) Error() string { return "status " + strconv.Itoa(e.status) }

// TestSocketActivationWorkers: under a supervisor the workers share
// systemd's one socket, and the supervisor alone notifies: READY=1 once
// every worker serves, RELOADING=1 with MONOTONIC_USEC on SIGHUP, READY=1
// once the workers are replaced, STOPPING=1 on SIGTERM.
func TestSocketActivationWorkers(t *testing.T) {
	t.Parallel()
	sd := newFakeSystemd(t)
	cmd, stderr := sd.start(t, "-workers", "2")
	assert.Equal(t, "READY=1", sd.next(t))
	var ready []string // the log may trail the notification: it is copied from a pipe
	require.Eventually(t, func() bool { ready = workerReady.FindAllString(stderr.String(), -1); return len(ready) == 2 }, logWait, 10*time.Millisecond)
	assert.NotContains(t, stderr.String(), `msg="workers replaced"`)
	slots := map[string]bool{}
	for i := 0; len(slots) < 2 && i < 500; i++ {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, _ := getBody(t, c, sd.base()+"/")
		slots[resp.Header.Get(workerHeader)] = true
	}
	assert.Len(t, slots, 2, "both workers accept on systemd's socket")

	var ts syscall.Timespec
	require.NoError(t, clockMonotonic(&ts))
	before := ts.Nano() / 1000
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	m := regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=(\d+)$`).FindStringSubmatch(sd.next(t))
	require.NotNil(t, m, "RELOADING=1 with the time")
	usec, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	require.NoError(t, clockMonotonic(&ts))
	assert.True(t, usec >= before && usec <= ts.Nano()/1000, "MONOTONIC_USEC %d is CLOCK_MONOTONIC in us, between %d and %d", usec, before, ts.Nano()/1000)
	assert.Equal(t, "READY=1", sd.next(t))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), `msg="workers replaced"`) }, logWait, 10*time.Millisecond)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, "STOPPING=1", sd.next(t))
	require.NoError(t, cmd.Wait())
	assert.False(t, strings.Contains(stderr.String(), "level=ERROR"), "no error")
}
