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
	db *os.File // the database file itself, flocked too (nil: none)
	st Status
}

// Take takes the lock of the database at db for this process, which
// serves with workers processes (1: itself; 0 for a command that does not
// serve), or returns a *HeldError naming the process that holds it. It
// creates the database's folder if needed (0755), as the store does, and
// never blocks.
//
// Besides the lock file of the name given, it locks the database file
// itself (flock, which SQLite's fcntl locks do not touch), creating it
// empty if need be (0644, as SQLite would): a second name for the same
// file (a symbolic or hard link) has a lock file of its own, but not a
// database of its own, so a server started by it is refused too. The
// database file stays open until Close: closing any descriptor of a file
// drops the process's fcntl locks on it, SQLite's included, so Close must
// come after the store's. A refused Take leaves no lock file it created
// (unless another process opened it meanwhile and holds it).
func Take(db string, workers int) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		return nil, err
	}
	path := Path(db)
	f, created, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	refuse := func(err error) (*Lock, error) {
		f.Close()
		if created {
			os.Remove(path)
		}
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		st, _ := ReadStatus(f)
		if errors.Is(err, unix.EWOULDBLOCK) {
			created = false // another process opened it after us and holds it: it is that one's now
			return refuse(&HeldError{DB: db, Path: path, PID: st.PID})
		}
		return refuse(fmt.Errorf("lock file %s: %w", path, err))
	}
	dbf, err := os.OpenFile(db, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return refuse(fmt.Errorf("database file: %w", err))
	}
	if err := unix.Flock(int(dbf.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		dbf.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return refuse(&HeldError{DB: db, Path: db, PID: holderPID(db)})
		}
		return refuse(fmt.Errorf("database file %s: %w", db, err))
	}
	l := &Lock{f: f, db: dbf, st: Status{PID: os.Getpid(), Workers: workers, Last: "ok"}}
	return l, l.write()
}

// openLockFile opens the lock file at path, creating it (0600) if there is
// none, and reports whether this call created it: only its creator may
// remove it on refusal (and not when another process holds it), or a
// process refused while another starts could unlink the lock file the
// other then holds. A file a refused creator removes between the two
// opens is tried again.
func openLockFile(path string) (f *os.File, created bool, err error) {
	for range 3 {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, false, err
		}
		f, err = os.OpenFile(path, os.O_RDWR, 0o600)
		if !errors.Is(err, os.ErrNotExist) {
			return f, false, err
		}
	}
	return nil, false, err
}

// holderPID is the pid in the lock file beside the file db names once its
// symbolic links are resolved (0: unknown, as for a hard link).
func holderPID(db string) int {
	real, err := filepath.EvalSymlinks(db)
	if err != nil {
		return 0
	}
	f, err := os.Open(Path(real))
	if err != nil {
		return 0
	}
	defer f.Close()
	st, _ := ReadStatus(f)
	return st.PID
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

// Close releases the lock; the file stays, for the next holder. Call it
// after the store is closed (see Take).
func (l *Lock) Close() error {
	if l.db != nil {
		l.db.Close()
	}
	return l.f.Close()
}

// Held reports whether some process holds the lock of the open lock file f
// (checked by trying a shared lock, released at once).
func Held(f *os.File) bool {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return true
}
