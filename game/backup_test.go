package game_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackup(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure a backup taken while another connection keeps writing holds
		// every write acknowledged before the backup began, opens as a game
		// database, and did not stop the writer.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "mulder", game.FBI)
		// Enough rows that the copy takes a while and overlaps the writes.
		notes := make([]game.Note, 5000)
		for i := range notes {
			notes[i] = game.Note{PlayerID: p.ID, Text: strings.Repeat("x", 200)}
		}
		require.NoError(t, s.AddNotes(ctx, notes))

		var mu sync.Mutex
		// Secrets, one new kv row per write: a player's sessions would be
		// capped at game.MaxSessions.
		type secret struct {
			name  string
			value []byte
		}
		var acked []secret // secrets whose Secret call returned
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				mu.Lock()
				name := fmt.Sprintf("backup-test-%d", len(acked))
				mu.Unlock()
				value, err := s.Secret(ctx, name, 16)
				if err != nil {
					done <- err
					return
				}
				mu.Lock()
				acked = append(acked, secret{name, value})
				mu.Unlock()
			}
		}()
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 20 }, 10*time.Second, time.Millisecond)
		mu.Lock()
		before := append([]secret(nil), acked...)
		mu.Unlock()
		dest := filepath.Join(t.TempDir(), "backup.db")
		require.NoError(t, game.Backup(ctx, s.Path, dest))
		mu.Lock()
		during := len(acked) - len(before)
		mu.Unlock()
		close(stop)
		require.NoError(t, <-done)
		t.Logf("%d writes before the backup, %d more while and just after it ran", len(before), during)

		info, err := os.Stat(dest)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a backup holds password hashes and keys")
		restored := &TestStore{Path: dest, Time: s.Time, Options: s.Options}
		restored.mustOpen(t)
		defer restored.MustClose(t)
		for _, sec := range before {
			// A missing secret would be made afresh, with other bytes.
			got, err := restored.Secret(ctx, sec.name, 16)
			require.NoError(t, err)
			assert.Equal(t, sec.value, got, "secret %s acknowledged before the backup", sec.name)
		}
		assert.Equal(t, 5000+1, MustCount(t, restored, `SELECT count(*) FROM events WHERE player_id = ?`, p.ID))
	})
	t.Run("ErrExist", func(t *testing.T) {
		// Ensure an existing file, even an empty one, is never overwritten.
		s := MustOpenStore(t)
		dest := filepath.Join(t.TempDir(), "backup.db")
		require.NoError(t, os.WriteFile(dest, nil, 0o644))
		err := game.Backup(ctx, s.Path, dest)
		require.ErrorIs(t, err, fs.ErrExist)
		info, err := os.Stat(dest)
		require.NoError(t, err)
		assert.Zero(t, info.Size())
	})
	t.Run("ErrNoDatabase", func(t *testing.T) {
		// Ensure a missing database is an error and is not created, nor is the copy.
		dir := t.TempDir()
		err := game.Backup(ctx, filepath.Join(dir, "missing.db"), filepath.Join(dir, "backup.db"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries)
	})
	t.Run("ErrNotGame", func(t *testing.T) {
		// Ensure a file that is not a game database is refused and no copy is left.
		dir := t.TempDir()
		other := filepath.Join(dir, "other.db")
		require.NoError(t, os.WriteFile(other, nil, 0o644))
		dest := filepath.Join(dir, "backup.db")
		err := game.Backup(ctx, other, dest)
		require.ErrorContains(t, err, "not a State Secrets database")
		assert.NoFileExists(t, dest)
	})
}

func TestBackupRefusesURIName(t *testing.T) {
	// Ensure a destination SQLite would read as a URI is refused, writing nothing anywhere.
	s := MustOpenStore(t)
	dir := t.TempDir()
	t.Chdir(dir)
	err := game.Backup(context.Background(), s.Path, "file:other.db")
	require.ErrorContains(t, err, "file:")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

func TestBackupCreatesFolders(t *testing.T) {
	// Ensure a destination in folders that do not exist yet is written, as
	// the README's `-backup backups/$(date +%F-%H%M).db` on a fresh clone.
	s := MustOpenStore(t)
	dest := filepath.Join(t.TempDir(), "backups", "nightly", "copy.db")
	require.NoError(t, game.Backup(context.Background(), s.Path, dest))
	fi, err := os.Stat(dest)
	require.NoError(t, err)
	assert.Positive(t, fi.Size())
	di, err := os.Stat(filepath.Dir(dest))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
}

func TestBackupRefusesCompanionName(t *testing.T) {
	// Ensure a destination SQLite keeps beside another database (its
	// journal, write-ahead log, shared-memory index or super-journal), which
	// it deletes or overwrites when that database is opened, is refused
	// before anything is written, whichever database it would belong to.
	s := MustOpenStore(t)
	dir := t.TempDir()
	for _, name := range []string{"x.db-journal", "x.db-wal", "x.db-shm", "X.DB-WAL", "backup-journal",
		filepath.Base(s.Path) + "-wal", "x.db-mj0A1B2C9FF"} {
		t.Run(name, func(t *testing.T) {
			err := game.Backup(context.Background(), s.Path, filepath.Join(dir, name))
			require.ErrorContains(t, err, "SQLite")
			entries, _ := os.ReadDir(dir)
			assert.Empty(t, entries)
		})
	}
	for _, name := range []string{"x.db", "x-walnut.db", "journal.db", "x.db-journal.bak", "x.db-mj0A1B2C8FF"} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, game.Backup(context.Background(), s.Path, filepath.Join(dir, name)))
		})
	}
}
