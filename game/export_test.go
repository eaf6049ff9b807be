package game

import (
	"context"
	"database/sql"
	"time"
)

// AddNotes stores notes as events dated Options.Now, for tests that need many
// events without playing for them.
func (s *Store) AddNotes(ctx context.Context, notes []Note) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		return insertNotes(ctx, tx, notes, func(int64) time.Time { return s.now() })
	})
}
