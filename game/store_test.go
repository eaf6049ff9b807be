package game_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

func TestOpen(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Ensure a new file gets WAL journaling, the seeded sources and a clock at tick 0 of round 1.
		s := MustOpenStore(t)
		assert.FileExists(t, s.Path)
		assert.Equal(t, "wal", mustJournalMode(t, s.Path), "WAL is a property of the file, seen without our DSN")
		sources, err := s.Sources(context.Background())
		require.NoError(t, err)
		assert.Len(t, sources, 8)
		for _, src := range sources {
			assert.Equal(t, src.BasePrice, src.Price)
			assert.Equal(t, game.SourceStartSecrets, src.Secrets)
			assert.NotEmpty(t, src.Description)
		}
		c, err := s.Clock(context.Background())
		require.NoError(t, err)
		assert.Equal(t, game.Clock{Round: 1, RoundTicks: 100, LastTick: c.LastTick, Interval: Interval}, c)
		assert.True(t, c.LastTick.Equal(Epoch))
	})
	t.Run("Defaults", func(t *testing.T) {
		// Ensure zero Options mean 10-minute ticks and one week of them per round.
		s, err := game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{})
		require.NoError(t, err)
		defer s.Close()
		c, err := s.Clock(context.Background())
		require.NoError(t, err)
		assert.Equal(t, game.DefaultTickInterval, c.Interval)
		assert.Equal(t, int64(7*24*6), c.RoundTicks)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure Open creates the file but not its folder, and refuses bad paths and options.
		_, err := game.Open(filepath.Join(t.TempDir(), "missing", "game.db"), game.Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "game: open")
		_, err = game.Open("", game.Options{})
		require.Error(t, err)
		_, err = game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{BcryptCost: 99})
		require.ErrorContains(t, err, "bcrypt cost 99 outside 4..31")
	})
	t.Run("OddPath", func(t *testing.T) {
		// Ensure URI characters in the path name a file rather than parameters.
		path := filepath.Join(t.TempDir(), "a?b#c%d.db")
		s, err := game.Open(path, game.Options{})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		assert.FileExists(t, path)
	})
}

// Ensure reopening a file applies no migration twice and keeps the data.
func TestOpen_MigrationsOnce(t *testing.T) {
	s := MustOpenStore(t)
	MustRegister(t, s, "alice", game.FBI)
	migrations, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, migrations)
	for range 2 {
		s.MustReopen(t)
		assert.Equal(t, len(migrations), MustCount(t, s, `SELECT count(*) FROM schema_migrations`))
		assert.Equal(t, 8, MustCount(t, s, `SELECT count(*) FROM sources`), "sources seeded once")
		assert.Equal(t, "alice", MustPlayer(t, s, 1).Name)
	}
}

// Ensure everything done before a restart is there after it.
func TestStore_Restart(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	sess := MustPlaySome(t, s)
	s.Time.Add(2 * Interval)
	_, err := s.Tick(ctx)
	require.NoError(t, err)
	before := MustSnapshot(t, s)

	s.MustReopen(t)
	assert.Equal(t, before, MustSnapshot(t, s))
	p, err := s.SessionPlayer(ctx, sess.ID)
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Name)
	_, err = s.Authenticate(ctx, "alice", "password1")
	assert.NoError(t, err)
	c, err := s.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), c.Tick)
}

// Ensure foreign keys are on: deleting a player takes its sessions, feed, posts and dossiers along.
func TestStore_ForeignKeys(t *testing.T) {
	s := MustOpenStore(t)
	a := MustPlaySome(t, s).PlayerID
	s.MustClose(t)

	db, err := sql.Open("sqlite", game.DSN(s.Path))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`DELETE FROM players WHERE id = ?`, a)
	require.NoError(t, err)
	for _, table := range []string{"sessions", "posts", "intel"} {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+table).Scan(&n))
		assert.Zero(t, n, table)
	}
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM events WHERE player_id = ?`, a).Scan(&n))
	assert.Zero(t, n)
}

// Ensure a connection opened with DSN gets the settings it documents: WAL,
// synchronous NORMAL (1), SQLite's checkpoints every 1,000 pages, foreign keys.
func TestDSN_Pragmas(t *testing.T) {
	s := MustOpenStore(t)
	db, err := sql.Open("sqlite", game.DSN(s.Path))
	require.NoError(t, err)
	defer db.Close()
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "synchronous": "1", "wal_autocheckpoint": "1000", "foreign_keys": "1", "busy_timeout": "5000",
	} {
		var got string
		require.NoError(t, db.QueryRow(`PRAGMA `+pragma).Scan(&got), pragma)
		assert.Equal(t, want, got, pragma)
	}
}

// MustPlaySome registers alice (FBI) and bob (MIB); alice logs in, posts and
// fortifies, and bob spies on her until he has her dossier. It returns
// alice's session.
func MustPlaySome(tb testing.TB, s *TestStore) *game.Session {
	tb.Helper()
	ctx := context.Background()
	a := MustRegister(tb, s, "alice", game.FBI)
	b := MustRegister(tb, s, "bob", game.MIB)
	sess, err := s.CreateSession(ctx, a.ID)
	require.NoError(tb, err)
	for _, action := range []game.Action{{Kind: game.PostMessage, Body: "Back in five."}, {Kind: game.Fortify}} {
		_, err = s.Act(ctx, a.ID, action)
		require.NoError(tb, err)
	}
	spyUntilKnown(tb, s, b.ID, a.ID)
	return sess
}

func mustJournalMode(tb testing.TB, path string) string {
	tb.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(tb, err)
	defer db.Close()
	var mode string
	require.NoError(tb, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	return mode
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	// Ensure a new database, which holds password hashes and the session
	// keys, is readable by its owner only.
	s := MustOpenStore(t)
	info, err := os.Stat(s.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// openMigratedBefore makes a database of the migrations named before
// first, as a server of that time left it, and returns its path and a
// connection to it.
func openMigratedBefore(t *testing.T, first string) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", game.DSN(path))
	require.NoError(t, err)
	names, err := filepath.Glob("migrations/*.sql")
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	require.NoError(t, err)
	for _, name := range names {
		if filepath.Base(name) >= first {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		_, err = db.Exec(string(src))
		require.NoError(t, err, name)
		_, err = db.Exec(`INSERT INTO schema_migrations (name, applied_at) VALUES (?, 0)`, "migrations/"+filepath.Base(name))
		require.NoError(t, err)
	}
	return path, db
}

// Ensure migration 0014 counts again the unread messages of a database
// whose prunes deleted unread ones without lowering the count (that a
// prune lowers it from then on, TestStore_Tick/PrunesReportsAndMessages
// checks).
func TestOpen_Migration0014RecountsUnread(t *testing.T) {
	path, db := openMigratedBefore(t, "0014")
	defer db.Close()
	for _, name := range []string{"alice", "bob"} {
		_, err := db.Exec(`INSERT INTO players (name, faction, password_hash, cash, agents, security, secrets, ap,
			protected_until, created_at) VALUES (?, 'FBI', x'00', 0, 0, 0, 0, 0, 0, 0)`, name)
		require.NoError(t, err)
	}
	// Bob kept 3 messages, 2 unread, but counts 7: 5 unread ones were pruned.
	_, err := db.Exec(`INSERT INTO messages (from_id, to_id, body, at, read) VALUES
		(1, 2, 'a', 0, 1), (1, 2, 'b', 0, 0), (1, 2, 'c', 0, 0)`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE players SET unread_messages = 7 WHERE id = 2`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := game.Open(path, game.Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	bob, err := s.Player(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, 2, bob.UnreadMessages, "counted again")
	alice, err := s.Player(ctx, 1)
	require.NoError(t, err)
	assert.Zero(t, alice.UnreadMessages)
}

// Ensure migration 0016 keeps the hall of fame of a database whose level
// players were placed by name, sharing their places again.
func TestOpen_Migration0016SharesPlaces(t *testing.T) {
	path, db := openMigratedBefore(t, "0016")
	defer db.Close()
	_, err := db.Exec(`INSERT INTO rounds (round, ended_tick, ended_at, fbi_players, fbi_secrets, mib_players, mib_secrets)
		VALUES (1, 10, 0, 2, 38, 1, 18)`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO placings (round, place, name, faction, secrets, cash) VALUES
		(1, 1, 'amy', 'FBI', 19, 0), (1, 2, 'zed', 'FBI', 19, 0), (1, 3, 'carol', 'MIB', 18, 0)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := game.Open(path, game.Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	defer s.Close()
	hall, err := s.HallOfFame(context.Background())
	require.NoError(t, err)
	require.Len(t, hall, 1)
	var top []string
	for _, p := range hall[0].Top {
		top = append(top, fmt.Sprint(p.Place, " ", p.Name))
	}
	assert.Equal(t, []string{"1 amy", "1 zed", "3 carol"}, top)
}

// Ensure migration 0008 (changes without the CHECK on kind) keeps the log's
// ids growing past every id handed out, even when every change was pruned:
// a browser's Last-Event-ID must never be ahead of the log.
func TestOpen_Migration0008KeepsChangeIDs(t *testing.T) {
	path, db := openMigratedBefore(t, "0008")
	defer db.Close()
	for range 3 {
		_, err := db.Exec(`INSERT INTO changes (kind, ref, at) VALUES ('news', 1, 0)`)
		require.NoError(t, err)
	}
	_, err := db.Exec(`DELETE FROM changes`) // all pruned, as after a quiet spell
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := game.Open(path, game.Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Register(context.Background(), "alice", "password1", game.FBI) // logs a player change: no CHECK refuses it
	require.NoError(t, err)
	changes, _, err := s.ChangesSince(context.Background(), 0, 10)
	require.NoError(t, err)
	require.NotEmpty(t, changes)
	assert.Equal(t, int64(4), changes[0].ID, "the ids go on after the 3 handed out before")
	assert.Contains(t, kinds(changes), "player")
}
