package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer collects run's log lines for the test goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

func TestRun(t *testing.T) {
	// Ensure the program serves the root on the port it logs and stops
	// cleanly when its context ends.
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>bench</p>"), 0o644))
		ctx, cancel := context.WithCancel(context.Background())
		var logs logBuffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-root", dir}, &logs) }()
		addrRE := regexp.MustCompile(`msg=serving addr=(\S+)`)
		require.Eventually(t, func() bool { return addrRE.MatchString(logs.String()) }, 10*time.Second, 5*time.Millisecond)
		addr := addrRE.FindStringSubmatch(logs.String())[1]
		resp, err := http.Get("http://" + addr + "/")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, "<p>bench</p>", string(body))
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after its context ended")
		}
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
