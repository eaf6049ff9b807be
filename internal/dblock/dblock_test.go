//go:build unix

package dblock_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/internal/dblock"
)

func TestTake(t *testing.T) {
	// Ensure the first taker holds the lock and says so in the file, a
	// second is refused with a HeldError naming the holder's pid, and the
	// lock is free again once closed.
	db := filepath.Join(t.TempDir(), "new", "ss.db")
	l, err := dblock.Take(db, 3)
	require.NoError(t, err)
	f, err := os.Open(dblock.Path(db))
	require.NoError(t, err)
	defer f.Close()
	assert.True(t, dblock.Held(f))
	st, err := dblock.ReadStatus(f)
	require.NoError(t, err)
	assert.Equal(t, dblock.Status{PID: os.Getpid(), Workers: 3, Last: "ok"}, st)

	_, err = dblock.Take(db, 1)
	var held *dblock.HeldError
	require.True(t, errors.As(err, &held), "got %v", err)
	assert.Equal(t, os.Getpid(), held.PID)
	assert.Contains(t, err.Error(), "another server (pid ")

	require.NoError(t, l.Reloaded(errors.New("worker 2\ndied")))
	st, err = dblock.ReadStatus(f)
	require.NoError(t, err)
	assert.Equal(t, dblock.Status{PID: os.Getpid(), Workers: 3, Reloads: 1, Last: "failed: worker 2 died"}, st)

	require.NoError(t, l.Close())
	assert.False(t, dblock.Held(f))
	l, err = dblock.Take(db, 1)
	require.NoError(t, err)
	l.Close()
}

func TestTakeOtherNames(t *testing.T) {
	// Ensure a second name for a held database (a symbolic link, a hard
	// link) is refused too, with the holder's pid where its lock file can
	// be found, and leaves no lock file of its own behind.
	dir := t.TempDir()
	db := filepath.Join(dir, "ss.db")
	l, err := dblock.Take(db, 1)
	require.NoError(t, err)
	defer l.Close()
	require.FileExists(t, db, "the database file is created to be locked")
	sym, hard := filepath.Join(dir, "sym.db"), filepath.Join(dir, "hard.db")
	require.NoError(t, os.Symlink(db, sym))
	require.NoError(t, os.Link(db, hard))

	for name, pid := range map[string]int{sym: os.Getpid(), hard: 0} {
		_, err := dblock.Take(name, 1)
		var held *dblock.HeldError
		require.True(t, errors.As(err, &held), "%s: got %v", name, err)
		assert.Equal(t, pid, held.PID, name)
		assert.Contains(t, err.Error(), "another server", name)
		assert.NoFileExists(t, dblock.Path(name), "a refused Take leaves no lock file")
	}

	require.NoError(t, l.Close())
	l2, err := dblock.Take(hard, 1)
	require.NoError(t, err, "free again once the holder closed")
	l2.Close()
}

func TestTakeRacingFirstStarts(t *testing.T) {
	// Ensure servers started at once on a new database leave one holder
	// whose lock file is in place and names it: a refused one removes only
	// a lock file it created, never the one the holder created.
	for round := range 200 {
		db := filepath.Join(t.TempDir(), "ss.db")
		locks := make(chan *dblock.Lock, 4)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if l, err := dblock.Take(db, 1); err == nil {
					locks <- l
				}
			})
		}
		wg.Wait()
		close(locks)
		var held []*dblock.Lock
		for l := range locks {
			held = append(held, l)
		}
		require.Len(t, held, 1, "round %d: one holder", round)
		f, err := os.Open(dblock.Path(db))
		require.NoError(t, err, "round %d: the holder's lock file is in place", round)
		assert.True(t, dblock.Held(f), "round %d: the lock file in place is the one held", round)
		f.Close()
		held[0].Close()
	}
}
