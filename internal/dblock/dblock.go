// Package dblock is the ownership of a State Secrets database: the lock
// file DB.lock beside it, held (flock, exclusive) by the one process that
// may change the game for as long as it runs.
//
// Only the holder writes the game: a server catches up ticks, migrates,
// ends rounds and serves orders; a command that registers or seeds players
// does so only when it could take the lock itself. A process that cannot
// take it must refuse before it opens the store for writing (game.Open
// migrates and catches up ticks at once), naming the holder's pid
// (HeldError), and change nothing. The lock file also says how the
// holder's reloads went, for gameserver -reload.
package dblock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Path is the lock file of the database at db: db + ".lock".
func Path(db string) string { return db + ".lock" }

// HeldError is Take's error when another process holds the lock.
type HeldError struct {
	DB   string // the database
	Path string // its lock file
	PID  int    // the holder's process id, as its lock file says (0: not said yet, or unknown: a hard link)
}

// Error says who holds the lock; callers prefix the flag that wanted it.
func (e *HeldError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("another server serves this database (it holds %s, by another name)", e.Path)
	}
	return fmt.Sprintf("another server (pid %d) serves this database (it holds %s)", e.PID, e.Path)
}

// Status is what a lock file says of its holder.
type Status struct {
	PID     int    // the holder's process id
	Workers int    // the worker processes it serves with (1: itself)
	Reloads int    // graceful reloads done
	Last    string // the latest reload's outcome: "ok", or "failed: why"
}

// ReadStatus parses a lock file; a partial one (being rewritten) is an error.
func ReadStatus(f *os.File) (Status, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return Status{}, err
	}
	var st Status
	var n int
	for line := range strings.Lines(string(b)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		n++
		switch k {
		case "pid":
			st.PID, _ = strconv.Atoi(v)
		case "workers":
			st.Workers, _ = strconv.Atoi(v)
		case "reloads":
			st.Reloads, _ = strconv.Atoi(v)
		case "last":
			st.Last = v
		}
	}
	if n < 4 || st.PID <= 0 {
		return st, errors.New("incomplete lock file")
	}
	return st, nil
}

// format is st as a lock file holds it.
func (st Status) format() string {
	return fmt.Sprintf("pid %d\nworkers %d\nreloads %d\nlast %s\n", st.PID, st.Workers, st.Reloads, st.Last)
}
