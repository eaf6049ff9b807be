package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startRun runs the program with args on 127.0.0.1:0 and returns the
// address it logs and a stop function that ends its context and asserts
// that run returns nil.
func startRun(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs testkit.LogBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), &logs) }()
	addrRE := regexp.MustCompile(`msg=serving addr=(\S+)`)
	require.Eventually(t, func() bool { return addrRE.MatchString(logs.String()) }, 10*time.Second, 5*time.Millisecond)
	return addrRE.FindStringSubmatch(logs.String())[1], func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after its context ended")
		}
	}
}

func TestRun(t *testing.T) {
	// Ensure the program serves the root on the port it logs and stops
	// cleanly when its context ends.
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>bench</p>"), 0o644))
		addr, stop := startRun(t, "-root", dir)
		resp, err := http.Get("http://" + addr + "/")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "<p>bench</p>", string(body))
		stop()
	})

	// Ensure -events serves an event stream, and a POST there reaches it.
	t.Run("Events", func(t *testing.T) {
		addr, stop := startRun(t, "-root", t.TempDir(), "-events", "/events")
		resp, err := http.Get("http://" + addr + "/events")
		require.NoError(t, err)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, ": open\n", line)
		post, err := http.Post("http://"+addr+"/events", "text/plain", strings.NewReader("hello"))
		require.NoError(t, err)
		body, _ := io.ReadAll(post.Body)
		post.Body.Close()
		assert.Equal(t, "sent 1\n", string(body))
		for line == "\n" || line == ": open\n" {
			line, err = br.ReadString('\n')
			require.NoError(t, err)
		}
		assert.Equal(t, "data: hello\n", line)
		resp.Body.Close()
		stop()
	})

	// Ensure a missing -root is refused with a message naming the flag.
	t.Run("ErrNoRoot", func(t *testing.T) {
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, io.Discard)
		require.ErrorContains(t, err, "-root")
	})

	// Ensure an unknown flag is refused.
	t.Run("ErrFlag", func(t *testing.T) {
		err := run(context.Background(), []string{"-nope"}, io.Discard)
		require.Error(t, err)
		assert.False(t, errors.Is(err, context.Canceled))
	})
}
