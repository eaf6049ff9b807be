package game

import (
	"database/sql"
	"fmt"
	"math"
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
// One fsync would stay with the writer: after a checkpoint has copied the
// whole WAL, SQLite's next writer starts the WAL again from its beginning,
// and syncs the new WAL header in that commit before writing over the old
// frames (its fix for ticket ff5be73dee: without the sync, a power cut
// could leave new frames behind an old header, and recovery would replay
// frames already checkpointed over newer pages); on the loop that was the
// tick's longest turn (23 to 41 ms at 10,000 streams). So the checkpointer
// is that next writer: after a checkpoint that copied the whole WAL it
// commits one tiny write (the database header's user_version, which the
// game does not use, moved on by one) on the Store's own connection, from
// its own goroutine, and the restart and its fsync happen there. The
// Store's connection, not the checkpointer's, because a commit on another
// connection would make the Store's Sync (PRAGMA data_version) drop the
// whole read cache; and because then the loop, should it need the
// connection meanwhile, waits for it in database/sql (woken the moment the
// commit ends) and never in SQLite's busy handler (which sleeps in steps of
// up to 100 ms): at most the rest of the fsync it would have made itself.
// Durability is SQLite's own: the header is synced, synchronous stays
// NORMAL. Checkpointing in RESTART or TRUNCATE mode would not move the
// fsync (the restart still happens in the next writer's commit), and
// synchronous=OFF would skip it only by giving up what synchronous=NORMAL
// promises (no corruption at a power cut).

// DefaultCheckpointInterval is Options.CheckpointInterval's zero value.
const DefaultCheckpointInterval = time.Second

// checkpointBackstop is the Store's own connection's wal_autocheckpoint
// while the checkpointer runs: 10,000 pages (40 MB of WAL), ten times
// SQLite's default, reached only if the checkpointer falls behind.
const checkpointBackstop = 10_000

// CheckpointStats says what the Store's checkpointer did (Options.CheckpointInterval).
type CheckpointStats struct {
	Runs    uint64        // checkpoints run
	Held    uint64        // intervals that ran none because a tick was under way
	Pages   uint64        // WAL frames they copied into the database file
	Longest time.Duration // the longest checkpoint, fsyncs included
	Errors  uint64        // checkpoints and restarts that failed
	Err     error         // the last failure, nil if none

	Restarts       uint64        // the tiny writes that started the WAL again after a whole copy
	LongestRestart time.Duration // the longest of them, its fsync and any wait for the connection included
}

// checkpointer runs PASSIVE checkpoints on a connection of its own, on
// its own goroutine, every interval.
type checkpointer struct {
	db    *sql.DB
	store *sql.DB     // the Store's connection, for the restarts
	hold  func() bool // true while a tick is under way (see checkpoint)
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once // close's

	mu     sync.Mutex
	stats  CheckpointStats
	copied int64 // the frames of the WAL copied as of the last checkpoint
}

// startCheckpointer opens a connection to path and starts checkpointing
// every interval, restarting the WAL on store, except while hold says a
// tick is under way (see checkpointer).
func startCheckpointer(path string, store *sql.DB, hold func() bool, every time.Duration) (*checkpointer, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("checkpointer: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	c := &checkpointer{db: db, store: store, hold: hold, every: every, stop: make(chan struct{}), done: make(chan struct{})}
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

// restartFrames is how many WAL frames restart's write leaves (the
// database's first page): a checkpoint that copied no more than that saw
// no write but the last restart, and does not restart again.
const restartFrames = 1

// checkpoint runs one PASSIVE checkpoint and counts it; when it copied the
// whole WAL, it restarts the WAL (restart). While a tick is under way (a
// payday's steps, 2 ms apart on the loop) it waits for the next interval:
// a restart then would hold the Store's connection, and the tick's next
// step would wait for it.
func (c *checkpointer) checkpoint() {
	if c.hold() {
		c.mu.Lock()
		c.stats.Held++
		c.mu.Unlock()
		return
	}
	start := time.Now()
	var busy, log, copied int64
	err := c.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
	d := time.Since(start)
	c.mu.Lock()
	s := &c.stats
	s.Runs++
	s.Longest = max(s.Longest, d)
	if err != nil {
		c.failed(fmt.Errorf("game: checkpoint: %w", err))
		c.mu.Unlock()
		return
	}
	if copied < c.copied { // the WAL started again from its beginning
		c.copied = 0
	}
	s.Pages += uint64(max(copied-c.copied, 0))
	c.copied = copied
	c.mu.Unlock()
	if busy == 0 && copied == log && log > restartFrames && !c.hold() { // a tick may have begun meanwhile
		c.restart()
	}
}

// restart commits one tiny write on the Store's connection (user_version
// plus one), the first since a checkpoint copied the whole WAL: SQLite
// starts the WAL again in it and syncs its header here, not in the loop's
// next commit. Should another write have come first, it is only appended.
func (c *checkpointer) restart() {
	start := time.Now()
	err := func() error {
		tx, err := c.store.Begin() // BEGIN IMMEDIATE (DSN)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var v int64
		if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, (v+1)&math.MaxInt32)); err != nil {
			return err
		}
		return tx.Commit()
	}()
	d := time.Since(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.failed(fmt.Errorf("game: restart the WAL: %w", err))
		return
	}
	c.stats.Restarts++
	c.stats.LongestRestart = max(c.stats.LongestRestart, d)
}

// failed counts err; c.mu is held.
func (c *checkpointer) failed(err error) {
	c.stats.Errors++
	c.stats.Err = err
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
