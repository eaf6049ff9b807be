package game_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// Interval is the tick interval of test stores.
const Interval = time.Minute

// Epoch is when every test store's clock starts.
var Epoch = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)

// TestStore is a Store on a file in a temporary folder, with a fake clock and
// a fixed random source.
type TestStore struct {
	*game.Store
	Path    string
	Time    *testkit.Clock
	Options game.Options
	closed  bool
}

// MustOpenStore opens a store on a new file in tb.TempDir(): one-minute
// ticks, 100-tick rounds, one-hour sessions, bcrypt.MinCost, a fixed PCG
// random source and a fake clock at Epoch. opts may change the Options.
// The store is closed when the test ends.
func MustOpenStore(tb testing.TB, opts ...func(*game.Options)) *TestStore {
	tb.Helper()
	clock := testkit.NewClock(Epoch)
	s := &TestStore{
		Path: filepath.Join(tb.TempDir(), "game.db"),
		Time: clock,
		Options: game.Options{
			TickInterval: Interval,
			RoundTicks:   100,
			SessionTTL:   time.Hour,
			BcryptCost:   bcrypt.MinCost,
			Rand:         rand.New(rand.NewPCG(1, 2)),
			Now:          clock.Now,
		},
	}
	for _, o := range opts {
		o(&s.Options)
	}
	s.mustOpen(tb)
	tb.Cleanup(func() { s.MustClose(tb) })
	return s
}

func (s *TestStore) mustOpen(tb testing.TB) {
	tb.Helper()
	store, err := game.Open(s.Path, s.Options)
	require.NoError(tb, err)
	s.Store, s.closed = store, false
}

// MustClose closes the store unless it is closed already.
func (s *TestStore) MustClose(tb testing.TB) {
	tb.Helper()
	if !s.closed {
		require.NoError(tb, s.Store.Close())
		s.closed = true
	}
}

// MustReopen closes the store and opens the same file again, as a restart does.
func (s *TestStore) MustReopen(tb testing.TB) {
	tb.Helper()
	s.MustClose(tb)
	s.mustOpen(tb)
}

// MustRegister registers name in faction f with the password "password1".
func MustRegister(tb testing.TB, s *TestStore, name string, f game.Faction) *game.Player {
	tb.Helper()
	p, err := s.Register(context.Background(), name, "password1", f)
	require.NoError(tb, err)
	return p
}

// MustPlayer returns player id as stored.
func MustPlayer(tb testing.TB, s *TestStore, id int64) *game.Player {
	tb.Helper()
	p, err := s.Player(context.Background(), id)
	require.NoError(tb, err)
	return p
}

// RequireCode fails unless err is a *game.Error with code and a message containing msg.
func RequireCode(tb testing.TB, err error, code, msg string) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, code, game.ErrorCode(err), "error: %v", err)
	require.Contains(tb, game.ErrorMessage(err), msg)
}

// Texts returns the texts of events.
func Texts(events []game.Event) []string {
	var texts []string
	for _, e := range events {
		texts = append(texts, e.Text)
	}
	return texts
}

// MustExec runs a statement on a connection of its own, beside the
// store's: call Store.Sync before reading what it wrote through the cache.
func MustExec(tb testing.TB, s *TestStore, query string, args ...any) {
	tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(s.Path))
	require.NoError(tb, err)
	defer db.Close()
	_, err = db.Exec(query, args...)
	require.NoError(tb, err)
}

// MustCount runs a count query on a connection of its own, beside the store's.
func MustCount(tb testing.TB, s *TestStore, query string, args ...any) int {
	tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(s.Path))
	require.NoError(tb, err)
	defer db.Close()
	var n int
	require.NoError(tb, db.QueryRow(query, args...).Scan(&n))
	return n
}
