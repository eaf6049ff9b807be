//go:build unix

package dblock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Lock is a held lock file. Its methods are for one goroutine at a time.
type Lock struct {
	f  *os.File
	st Status
}

// Take takes the lock of the database at db for this process, which
// serves with workers processes (1: itself; 0 for a command that does not
// serve), or returns a *HeldError naming the process that holds it. It
// creates the database's folder if needed (0755), as the store does, and
// never blocks.
func Take(db string, workers int) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		return nil, err
	}
	path := Path(db)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		st, _ := ReadStatus(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &HeldError{DB: db, Path: path, PID: st.PID}
		}
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	l := &Lock{f: f, st: Status{PID: os.Getpid(), Workers: workers, Last: "ok"}}
	return l, l.write()
}

// write records the holder's status in the lock file.
func (l *Lock) write() error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(l.st.format()), 0)
	return err
}

// Reloaded records one more reload and its outcome (nil: every worker replaced).
func (l *Lock) Reloaded(err error) error {
	l.st.Reloads++
	l.st.Last = "ok"
	if err != nil {
		l.st.Last = "failed: " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	return l.write()
}

// Close releases the lock; the file stays, for the next holder.
func (l *Lock) Close() error { return l.f.Close() }

// Held reports whether some process holds the lock of the open lock file f
// (checked by trying a shared lock, released at once).
func Held(f *os.File) bool {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return true
}
