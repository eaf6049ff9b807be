package game_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestStore_Checkpoints(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure what the Store commits reaches the database file itself
		// (read without the WAL) by its checkpointer, and its own connection
		// checkpoints only past the backstop.
		s := MustOpenStore(t, func(o *game.Options) { o.CheckpointInterval = 20 * time.Millisecond })
		MustRegister(t, s, "alice", game.FBI)
		assert.Eventually(t, func() bool { return inDatabaseFile(t, s.Path, "alice") }, 5*time.Second, 10*time.Millisecond)
		// The checkpoint counts itself once it returned: after the copy.
		require.Eventually(t, func() bool { return s.Checkpoints().Pages > 0 }, 5*time.Second, 10*time.Millisecond)
		st := s.Checkpoints()
		assert.Positive(t, st.Runs)
		assert.Positive(t, st.Pages)
		assert.NoError(t, st.Err)
		auto, err := s.Pragma(ctx, "wal_autocheckpoint")
		require.NoError(t, err)
		assert.Equal(t, "10000", auto)
	})
	t.Run("Restart", func(t *testing.T) {
		// Ensure the checkpointer, after copying the whole WAL, makes the
		// write that starts it again (and syncs its header) itself, once:
		// a checkpoint that finds only that write's frame restarts nothing,
		// so an idle Store does not write every interval.
		s := MustOpenStore(t, func(o *game.Options) { o.CheckpointInterval = 20 * time.Millisecond })
		MustRegister(t, s, "alice", game.FBI)
		require.Eventually(t, func() bool { return s.Checkpoints().Restarts > 0 }, 5*time.Second, 10*time.Millisecond)
		st := s.Checkpoints()
		require.NoError(t, st.Err)
		assert.Positive(t, st.LongestRestart)
		// On a busy machine a restart's write may still find a reader in
		// the WAL and only be appended, so the next checkpoint restarts
		// once more; what must not happen is a restart every interval:
		// within a few tries, four checkpoints in a row restart nothing.
		settled := false
		for try := 0; try < 5 && !settled; try++ {
			before := s.Checkpoints()
			require.Eventually(t, func() bool { return s.Checkpoints().Runs > before.Runs+3 }, 5*time.Second, 10*time.Millisecond)
			st = s.Checkpoints()
			settled = st.Restarts == before.Restarts
		}
		assert.True(t, settled, "an idle Store kept restarting the WAL: %d restarts", st.Restarts)
		v, err := s.Pragma(ctx, "user_version")
		require.NoError(t, err)
		assert.Equal(t, strconv.FormatUint(st.Restarts, 10), v)
	})
	t.Run("Off", func(t *testing.T) {
		// Ensure a Store without a checkpointer leaves the WAL to SQLite's
		// own checkpoints, past 1,000 pages: a few writes stay in the WAL.
		s := MustOpenStore(t, func(o *game.Options) { o.CheckpointInterval = -1 })
		MustRegister(t, s, "alice", game.FBI)
		time.Sleep(100 * time.Millisecond)
		assert.False(t, inDatabaseFile(t, s.Path, "alice"))
		assert.Zero(t, s.Checkpoints())
		auto, err := s.Pragma(ctx, "wal_autocheckpoint")
		require.NoError(t, err)
		assert.Equal(t, "1000", auto)
	})
	t.Run("HeldDuringTick", func(t *testing.T) {
		// Ensure the checkpointer waits while a payday's steps are under
		// way (its restart would hold the connection the next step needs),
		// and checkpoints again once the tick is done.
		path, _ := setUpPayday(t, seedPayday(t), 100, 0)
		clock := beforePayday()
		s, err := game.Open(path, game.Options{TickInterval: Interval, RoundTicks: 100, SessionTTL: time.Hour,
			PaySlice: paydaySlice, Now: clock.Now, CheckpointInterval: 20 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		clock.Add(time.Nanosecond)
		_, more, err := s.TickStep(ctx)
		require.NoError(t, err)
		require.True(t, more, "the payday takes several steps")
		// A checkpoint that began before the tick may still count itself
		// (slowly, on a busy machine). The checkpointer does one thing at
		// a time, so once it has held back for the tick, any such
		// checkpoint has counted: take the count then.
		held := s.Checkpoints().Held
		require.Eventually(t, func() bool { return s.Checkpoints().Held > held }, 10*time.Second, 5*time.Millisecond)
		runs := s.Checkpoints().Runs
		time.Sleep(300 * time.Millisecond) // 15 intervals
		assert.Equal(t, runs, s.Checkpoints().Runs, "a checkpoint ran in the middle of a tick")
		for more {
			_, more, err = s.TickStep(ctx)
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool { return s.Checkpoints().Runs > runs }, 5*time.Second, 10*time.Millisecond)
	})
	t.Run("CacheStays", func(t *testing.T) {
		// Ensure a checkpoint, which commits nothing, is not taken by Sync
		// for another connection's write: the read cache and the version
		// stay.
		s := MustOpenStore(t, func(o *game.Options) { o.CheckpointInterval = 20 * time.Millisecond })
		MustRegister(t, s, "alice", game.FBI)
		require.NoError(t, s.Sync(ctx))
		v, runs := s.Version(), s.Checkpoints().Runs
		require.Eventually(t, func() bool { return inDatabaseFile(t, s.Path, "alice") }, 5*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool { return s.Checkpoints().Runs > runs+1 }, 5*time.Second, 10*time.Millisecond)
		require.NoError(t, s.Sync(ctx))
		assert.Equal(t, v, s.Version())
	})
}

// inDatabaseFile reports whether the database file at path, read as it
// is on disk without its WAL (immutable=1), holds a player called name
// (false while it holds no players table yet).
func inDatabaseFile(t *testing.T, path, name string) bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?immutable=1")
	require.NoError(t, err)
	defer db.Close()
	var n int
	err = db.QueryRow(`SELECT count(*) FROM players WHERE name = ?`, name).Scan(&n)
	return err == nil && n > 0
}
