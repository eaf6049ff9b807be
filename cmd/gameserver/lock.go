//go:build unix

package main

// The server's lock file, beside the database: held (flock) by the one
// server of a database for as long as it runs, so a second one refuses to
// start, and read by -reload to find it and learn how its reload went.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// serverLock is the held lock file of a database.
type serverLock struct {
	f       *os.File
	pid     int
	workers int
	reloads int
}

// lockPath is the lock file of the database at db.
func lockPath(db string) string { return db + ".lock" }

// lockDatabase takes the lock file of the -db database for this process,
// serving with workers processes (1: this one), or says which process
// holds it. It creates the database's folder if needed, as openStore
// does: with -workers the lock is taken before the store is opened.
func lockDatabase(db string, workers int) (*serverLock, error) {
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	path := lockPath(db)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("-db: lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		st, _ := readLockStatus(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("-db %s: another server (pid %d) serves this database (it holds %s); stop it first, "+
				"or restart its workers with -reload", db, st.pid, path)
		}
		return nil, fmt.Errorf("-db: lock file %s: %w", path, err)
	}
	l := &serverLock{f: f, pid: os.Getpid(), workers: workers}
	return l, l.write("")
}

// write records the lock holder's state: its pid, its workers, and the
// outcome of its latest reload (why it failed, or "" for none or ok).
func (l *serverLock) write(failed string) error {
	last := "ok"
	if failed != "" {
		last = "failed: " + strings.ReplaceAll(failed, "\n", " ")
	}
	s := fmt.Sprintf("pid %d\nworkers %d\nreloads %d\nlast %s\n", l.pid, l.workers, l.reloads, last)
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(s), 0)
	return err
}

// reloaded records one more reload and its outcome (nil: every worker replaced).
func (l *serverLock) reloaded(err error) error {
	l.reloads++
	if err != nil {
		return l.write(err.Error())
	}
	return l.write("")
}

// Close releases the lock (the file stays, for the next server).
func (l *serverLock) Close() error { return l.f.Close() }

// lockStatus is what a lock file says.
type lockStatus struct {
	pid, workers, reloads int
	last                  string
}

// readLockStatus parses a lock file; a partial one (being rewritten) is an error.
func readLockStatus(f *os.File) (lockStatus, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return lockStatus{}, err
	}
	var st lockStatus
	var n int
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		n++
		switch k {
		case "pid":
			st.pid, _ = strconv.Atoi(v)
		case "workers":
			st.workers, _ = strconv.Atoi(v)
		case "reloads":
			st.reloads, _ = strconv.Atoi(v)
		case "last":
			st.last = v
		}
	}
	if n < 4 || st.pid <= 0 {
		return st, errors.New("incomplete lock file")
	}
	return st, nil
}

// reloadWait bounds how long -reload waits for the replacements: every
// worker's start (supervisor.DefaultReadyTimeout) and some.
const reloadWait = 90 * time.Second

// reloadServer is -reload: it signals the server that holds the -db
// database's lock (SIGHUP) and waits for the outcome in its lock file,
// returning an error (a non-zero exit, for systemctl reload) if a worker
// could not be replaced, no server runs, or it runs without workers.
func reloadServer(ctx context.Context, o options, stdout io.Writer) error {
	path := lockPath(o.db)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("-reload: no server has run on -db %s (%w)", o.db, err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return fmt.Errorf("-reload: no server runs on -db %s (%s is not held)", o.db, path)
	}
	before, err := pollLockStatus(ctx, f, func(lockStatus) bool { return true })
	if err != nil {
		return fmt.Errorf("-reload: %s: %w", path, err)
	}
	if before.workers == 1 {
		return fmt.Errorf("-reload: the server (pid %d) runs without workers (-workers 1): it has no graceful restart", before.pid)
	}
	if err := syscall.Kill(before.pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("-reload: signal pid %d: %w", before.pid, err)
	}
	wctx, cancel := context.WithTimeout(ctx, reloadWait)
	defer cancel()
	after, err := pollLockStatus(wctx, f, func(st lockStatus) bool { return st.pid != before.pid || st.reloads > before.reloads })
	switch {
	case err != nil:
		return fmt.Errorf("-reload: no outcome from pid %d within %v: %w", before.pid, reloadWait, err)
	case after.pid != before.pid:
		return fmt.Errorf("-reload: the server changed (pid %d, now %d) during the reload", before.pid, after.pid)
	case after.last != "ok":
		return fmt.Errorf("-reload: pid %d: %s", after.pid, strings.TrimPrefix(after.last, "failed: "))
	}
	_, err = fmt.Fprintf(stdout, "reloaded: pid %d replaced its %d workers\n", after.pid, after.workers)
	return err
}

// pollLockStatus reads f until its status satisfies done, or ctx ends.
func pollLockStatus(ctx context.Context, f *os.File, done func(lockStatus) bool) (lockStatus, error) {
	for {
		st, err := readLockStatus(f)
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
