package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is an io.Writer safe for the server's logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var servingAddr = regexp.MustCompile(`msg=serving addr=(\S+)`)

// program is the whole command running in-process, as main runs it.
type program struct {
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
	stop   func() error // cancels run's context (as SIGTERM does) and returns run's error
}

// startProgram runs the command with args plus -addr 127.0.0.1:0 and waits
// until it serves.
func startProgram(t *testing.T, args ...string) *program {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stderr: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), io.Discard, p.stderr)
	}()
	var once sync.Once
	var runErr error
	p.stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = p.stop() })
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			require.FailNow(t, "gameserver stopped before serving", "err %v, log:\n%s", err, p.stderr)
		default:
		}
		m := servingAddr.FindStringSubmatch(p.stderr.String())
		if m == nil {
			return false
		}
		p.base = "http://" + m[1]
		return true
	}, 20*time.Second, 10*time.Millisecond, "no serving line in the log")
	return p
}

// mustNewPlayer runs `gameserver -db DB -new-player NAME` and returns the tid it prints.
func mustNewPlayer(t *testing.T, db, name string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-db", db, "-new-player", name}, &out, io.Discard))
	tid := strings.TrimSpace(out.String())
	require.Regexp(t, `^[0-9a-f]{32}$`, tid)
	return tid
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"-tick", "0"}, "-tick must be positive"},
		{[]string{"-tick", "-5s"}, "-tick must be positive"},
		{[]string{"-tick", "soon"}, "-tick"},
		{[]string{"-nope"}, "-nope"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-db", ""}, "-db"},
		{[]string{"-faction", "MIB"}, "-faction applies only with -new-player"},
		{[]string{"-max-conns", "-1"}, "-max-conns must not be negative"},
		{[]string{"-max-conns", "many"}, "-max-conns"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Ensure a bad command line is a usage error naming the flag, before anything is created.
			dir := t.TempDir()
			err := run(context.Background(), append(tc.args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard)
			require.Error(t, err)
			assert.True(t, errors.As(err, new(usageError)), "want a usageError, got %T %v", err, err)
			assert.Contains(t, err.Error(), tc.want)
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries)
		})
	}
}

func TestNewPlayerRejectsBadFaction(t *testing.T) {
	// Ensure -faction is validated with a message naming the flag.
	db := filepath.Join(t.TempDir(), "ss.db")
	err := run(context.Background(), []string{"-db", db, "-new-player", "agent", "-faction", "CIA"}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-faction")
}

func TestServeAndShutdown(t *testing.T) {
	// Ensure the program creates its database folder on first start, serves
	// the front page and a tid page, and stops cleanly when signalled.
	db := filepath.Join(t.TempDir(), "data", "statesecrets.db")
	tid := mustNewPlayer(t, db, "mulder")
	p := startProgram(t, "-db", db, "-access-log", "-")

	resp, body := get(t, p.base+"/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "State Secrets")

	resp, body = get(t, p.base+"/game?function=hq&tid="+tid)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = get(t, p.base+"/game?function=news&t%69d="+tid) // the query parser decodes the name
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "mulder")
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))

	// No form is larger than handlers.MaxFormBytes, so the loop refuses a
	// larger body from its declared length, before reading it.
	resp, err := http.Post(p.base+"/login", "application/x-www-form-urlencoded",
		strings.NewReader(strings.Repeat("a", 100<<10)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain", "the loop's 413, not the handlers' page")
	assert.True(t, resp.Close, "the loop closes after refusing a body")

	require.NoError(t, p.stop())
	assert.FileExists(t, db)
	assert.Regexp(t, `"GET /game\?function=hq&tid=REDACTED HTTP/1.1" 200 \d+`, p.stderr.String(), "access log line")
	assert.NotContains(t, p.stderr.String(), tid, "a session id is a credential: never logged")
	assert.Contains(t, p.stderr.String(), "shutting down")
}

func TestTicks(t *testing.T) {
	// Ensure the game clock advances on the server's loop at the -tick
	// interval: headquarters shows the tick count growing.
	db := filepath.Join(t.TempDir(), "ss.db")
	tid := mustNewPlayer(t, db, "skinner")
	p := startProgram(t, "-db", db, "-tick", "200ms")
	tickN := regexp.MustCompile(`Tick (\d+) of round`)
	require.Eventually(t, func() bool {
		_, body := get(t, p.base+"/game?function=hq&tid="+tid)
		m := tickN.FindStringSubmatch(body)
		return m != nil && len(m[1]) > 0 && m[1] != "0" && m[1] != "1"
	}, 15*time.Second, 50*time.Millisecond, "the tick count never passed 1")
}

func TestMaxConnsFlag(t *testing.T) {
	// Ensure -max-conns defaults to below the open-file limit, leaving
	// descriptors for the database and the log, and can be set.
	limit := fdLimit()
	require.Positive(t, limit, "the open-file limit is readable here")
	o, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, max(limit-fdReserve, 1), o.maxConns)
	assert.Less(t, o.maxConns, limit)
	o, err = parseFlags([]string{"-max-conns", "10"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 10, o.maxConns)
	o, err = parseFlags([]string{"-max-conns", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, o.maxConns, "0: no cap")
}
