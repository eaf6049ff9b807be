package game

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointInterval is how often the checkpointer copies the WAL back into
// the database file. The WAL holds at most about that long of writes: a
// payday of 10,000 players writes a few MB.
const checkpointInterval = time.Second

// checkpointer runs SQLite's WAL checkpoints on a goroutine and connection
// of its own, so that no commit on the Store's connection (on the server's
// loop) runs one. With SQLite's default, the commit that takes the WAL past
// 1,000 pages copies them back and syncs the file before it returns: 10 to
// 15 ms of the loop, every few MB written, on the 2-core machine of
// docs/live.md. The Store's connection opens with wal_autocheckpoint(0)
// (storeDSN) and leaves that work to this goroutine's PASSIVE checkpoints,
// which run beside readers and writers in WAL mode and never wait for them
// (https://www.sqlite.org/wal.html#ckpt, sqlite3_wal_checkpoint_v2).
type checkpointer struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// storeDSN is DSN(path) for the Store's own connection: without automatic
// checkpoints, which the checkpointer runs instead.
func storeDSN(path string) string { return DSN(path) + "&_pragma=wal_autocheckpoint(0)" }

// startCheckpointer starts checkpointing the database at path every
// checkpointInterval, until stop.
func startCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{stop: make(chan struct{})}
	c.done.Go(func() {
		defer db.Close()
		t := time.NewTicker(checkpointInterval)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				// A failure (the file busy, being closed) leaves the frames
				// for the next try; the WAL is still complete and correct.
				db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
			}
		}
	})
	return c, nil
}

// close stops the checkpointer and waits for it; it may be called again.
// Closing the Store's connection, the last, checkpoints what is left.
func (c *checkpointer) close() {
	c.stopOnce.Do(func() { close(c.stop) })
	c.done.Wait()
}
