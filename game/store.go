package game

import (
	"context"
	"database/sql"
)

// Store keeps the game in one SQLite file. It is safe for concurrent use,
// though the server calls it from its one loop goroutine.
type Store struct {
	db  *sql.DB
	opt Options
}

var errNotImplemented = Errorf(EINTERNAL, "Not implemented yet.")

// Open opens (creating if needed) the SQLite database at path.
func Open(path string, opt Options) (*Store, error) { return nil, errNotImplemented }

// Close closes the database.
func (s *Store) Close() error { return nil }

// Register creates a player.
func (s *Store) Register(ctx context.Context, name, password string, f Faction) (*Player, error) {
	return nil, errNotImplemented
}

// Authenticate checks a name and password.
func (s *Store) Authenticate(ctx context.Context, name, password string) (*Player, error) {
	return nil, errNotImplemented
}

// CreateSession starts a session for the player.
func (s *Store) CreateSession(ctx context.Context, playerID int64) (*Session, error) {
	return nil, errNotImplemented
}

// SessionPlayer returns the player of a session.
func (s *Store) SessionPlayer(ctx context.Context, id string) (*Player, error) {
	return nil, errNotImplemented
}

// DeleteSession ends a session.
func (s *Store) DeleteSession(ctx context.Context, id string) error { return errNotImplemented }

// Secret returns size random bytes kept under name.
func (s *Store) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	return nil, errNotImplemented
}

// Clock returns the game clock.
func (s *Store) Clock(ctx context.Context) (Clock, error) { return Clock{}, errNotImplemented }

// Player returns a player by id.
func (s *Store) Player(ctx context.Context, id int64) (*Player, error) { return nil, errNotImplemented }

// Events returns a player's feed, newest first.
func (s *Store) Events(ctx context.Context, playerID int64, limit int) ([]Event, error) {
	return nil, errNotImplemented
}

// News returns public events, newest first.
func (s *Store) News(ctx context.Context, limit int) ([]Event, error) { return nil, errNotImplemented }

// Sources returns the sources.
func (s *Store) Sources(ctx context.Context) ([]Source, error) { return nil, errNotImplemented }

// Dossiers returns one dossier per other player.
func (s *Store) Dossiers(ctx context.Context, playerID int64) ([]Dossier, error) {
	return nil, errNotImplemented
}

// Ranking returns the scoreboard.
func (s *Store) Ranking(ctx context.Context) (*Ranking, error) { return nil, errNotImplemented }

// Posts returns board posts, newest first.
func (s *Store) Posts(ctx context.Context, limit int) ([]Post, error) { return nil, errNotImplemented }

// Act performs an action.
func (s *Store) Act(ctx context.Context, playerID int64, a Action) (Outcome, error) {
	return Outcome{}, errNotImplemented
}

// Tick applies due ticks.
func (s *Store) Tick(ctx context.Context) (int, error) { return 0, errNotImplemented }
