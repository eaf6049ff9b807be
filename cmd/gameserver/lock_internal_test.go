package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/internal/dblock"
)

// Ensure the lock of a -db in a folder not made yet is taken, the folder
// made, as -workers 1 makes it when it opens the store (-workers 2 takes
// the lock first), and that a second taker is refused.
func TestLockDatabase_NewFolder(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new", "folder", "x.db")
	lock, err := lockDatabase(db, 2)
	require.NoError(t, err)
	defer lock.Close()
	assert.FileExists(t, dblock.Path(db))
	_, err = lockDatabase(db, 2)
	assert.Error(t, err, "the lock is held")
}
