package game

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// Ensure the Store's own connection never checkpoints the WAL and the
// checkpointer does: what a seeding writes reaches the database file
// without another write, a restart or a close.
func TestCheckpointer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "game.db")
	s, err := Open(path, Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	defer s.Close()

	var auto int
	require.NoError(t, s.db.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto))
	assert.Zero(t, auto, "the store's connection checkpoints automatically")

	_, err = s.Seed(ctx, 500)
	require.NoError(t, err)
	size := func() int64 {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Size()
	}
	wal, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.Greater(t, wal.Size(), int64(500<<10), "the seeding wrote to the WAL")
	assert.Eventually(t, func() bool { return size() > 500<<10 }, 10*time.Second, 50*time.Millisecond,
		"the WAL is copied back into the database file: %d bytes", size())
}
