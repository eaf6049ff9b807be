//go:build unix

package dblock_test

import (
	"errors"
	"os"
	"path/filepath"
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
