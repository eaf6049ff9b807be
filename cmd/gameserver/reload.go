//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/statesecrets/server/internal/dblock"
)

// reloadWait bounds how long -reload waits for the replacements: every
// worker's start (supervisor.DefaultReadyTimeout) and some.
const reloadWait = 90 * time.Second

// reloadServer is -reload: it signals the server that holds the -db
// database's lock (SIGHUP) and waits for the outcome in its lock file,
// returning an error (a non-zero exit, for systemctl reload) if a worker
// could not be replaced, no server runs, or it runs without workers.
func reloadServer(ctx context.Context, o options, stdout io.Writer) error {
	path := dblock.Path(o.db)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("-reload: no server has run on -db %s (%w)", o.db, err)
	}
	defer f.Close()
	if !dblock.Held(f) {
		return fmt.Errorf("-reload: no server runs on -db %s (%s is not held)", o.db, path)
	}
	before, err := pollLockStatus(ctx, f, func(dblock.Status) bool { return true })
	if err != nil {
		return fmt.Errorf("-reload: %s: %w", path, err)
	}
	if before.Workers == 1 {
		return fmt.Errorf("-reload: the server (pid %d) runs without workers (-workers 1): it has no graceful restart", before.PID)
	}
	if err := syscall.Kill(before.PID, syscall.SIGHUP); err != nil {
		return fmt.Errorf("-reload: signal pid %d: %w", before.PID, err)
	}
	wctx, cancel := context.WithTimeout(ctx, reloadWait)
	defer cancel()
	after, err := pollLockStatus(wctx, f, func(st dblock.Status) bool { return st.PID != before.PID || st.Reloads > before.Reloads })
	switch {
	case err != nil:
		return fmt.Errorf("-reload: no outcome from pid %d within %v: %w", before.PID, reloadWait, err)
	case after.PID != before.PID:
		return fmt.Errorf("-reload: the server changed (pid %d, now %d) during the reload", before.PID, after.PID)
	case after.Last != "ok":
		return fmt.Errorf("-reload: pid %d: %s", after.PID, strings.TrimPrefix(after.Last, "failed: "))
	}
	_, err = fmt.Fprintf(stdout, "reloaded: pid %d replaced its %d workers\n", after.PID, after.Workers)
	return err
}

// pollLockStatus reads f until its status satisfies done, or ctx ends.
func pollLockStatus(ctx context.Context, f *os.File, done func(dblock.Status) bool) (dblock.Status, error) {
	for {
		st, err := dblock.ReadStatus(f)
		if err == nil && done(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return st, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
