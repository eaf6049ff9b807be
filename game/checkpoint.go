package game

import (
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// WAL checkpoints, off the caller's goroutine.
//
// In WAL mode a commit appends its pages to the -wal file, and a
// checkpoint copies them back into the database file, fsyncing the WAL
// before and the database after: with synchronous=NORMAL (DSN) that is the
// only fsync there is. Left to itself SQLite checkpoints in the commit
// that takes the WAL past wal_autocheckpoint pages, on the committing
// connection: the server's loop, which then waits for both fsyncs (12 to
// 25 ms on a busy disk, docs/live.md). So a Store checkpoints on a
// connection and goroutine of its own, every Options.CheckpointInterval,
// in PASSIVE mode: it copies what no reader still needs and never waits
// for, nor blocks, the Store's own connection (one with nothing new to
// copy reads the WAL's index and syncs nothing). The Store's connection keeps an automatic checkpoint only
// as a backstop, at checkpointBackstop pages, should the checkpointer fall
// behind.
//
// One fsync stays with the writer: after a checkpoint has copied the whole
// WAL, SQLite's next writer starts the WAL again from its beginning, and
// syncs the new WAL header in that commit before writing over the old
// frames (its fix for ticket ff5be73dee: without the sync, a power cut
// could leave new frames behind an old header, and recovery would replay
// frames already checkpointed over newer pages). It is one small write at
// the start of a file that keeps its size (journal_size_limit stays off,
// so the WAL is never truncated and the sync needs no journal commit of
// the file system), once per interval at most. Checkpointing in RESTART
// or TRUNCATE mode would not move it: the restart still happens in the
// next writer's commit; and synchronous=OFF on the Store's connection
// would skip it only by giving up what synchronous=NORMAL promises (no
// corruption at a power cut).

// DefaultCheckpointInterval is Options.CheckpointInterval's zero value.
const DefaultCheckpointInterval = time.Second

// checkpointBackstop is the Store's own connection's wal_autocheckpoint
// while the checkpointer runs: 10,000 pages (40 MB of WAL), ten times
// SQLite's default, reached only if the checkpointer falls behind.
const checkpointBackstop = 10_000

// CheckpointStats says what the Store's checkpointer did (Options.CheckpointInterval).
type CheckpointStats struct {
	Runs    uint64        // checkpoints run
	Pages   uint64        // WAL frames they copied into the database file
	Longest time.Duration // the longest checkpoint, fsyncs included
	Errors  uint64        // checkpoints that failed
	Err     error         // the last failure, nil if none
}

// checkpointer runs PASSIVE checkpoints on a connection of its own, on
// its own goroutine, every interval.
type checkpointer struct {
	db    *sql.DB
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once // close's

	mu     sync.Mutex
	stats  CheckpointStats
	copied int64 // the frames of the WAL copied as of the last checkpoint
}

// startCheckpointer opens a connection to path and starts checkpointing
// every interval (see checkpointer).
func startCheckpointer(path string, every time.Duration) (*checkpointer, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	c := &checkpointer{db: db, every: every, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.checkpoint()
		}
	}
}

// checkpoint runs one PASSIVE checkpoint and counts it.
func (c *checkpointer) checkpoint() {
	start := time.Now()
	var busy, log, copied int64
	err := c.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
	d := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.stats
	s.Runs++
	s.Longest = max(s.Longest, d)
	if err != nil {
		s.Errors++
		s.Err = fmt.Errorf("game: checkpoint: %w", err)
		return
	}
	if copied < c.copied { // the WAL started again from its beginning
		c.copied = 0
	}
	s.Pages += uint64(max(copied-c.copied, 0))
	c.copied = copied
}

// close stops the goroutine, waiting for a checkpoint in progress, and
// closes the connection; calls after the first do nothing.
func (c *checkpointer) close() {
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		c.db.Close()
	})
}

// Checkpoints returns what the Store's checkpointer did so far (zero when
// Options.CheckpointInterval is negative). It is safe from any goroutine.
func (s *Store) Checkpoints() CheckpointStats {
	c := s.ckpt
	if c == nil {
		return CheckpointStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
