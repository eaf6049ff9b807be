package game

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// AddNotes stores notes as events dated Options.Now, for tests that need many
// events without playing for them.
func (s *Store) AddNotes(ctx context.Context, notes []Note) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		return insertNotes(ctx, tx, 0, notes, func(int64) time.Time { return s.now() })
	})
}

// AddPosts stores bodies as board posts by the player, dated Options.Now and
// in order, without the posting cooldown, for tests that need a full board.
func (s *Store) AddPosts(ctx context.Context, playerID int64, bodies []string) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		for _, body := range bodies {
			if _, err := tx.ExecContext(ctx, `INSERT INTO posts (player_id, body, at) VALUES (?, ?, ?)`,
				playerID, body, unixNano(s.now())); err != nil {
				return err
			}
		}
		return nil
	})
}

// HashCost is the bcrypt cost of the hash l checks passwords against.
func (l *Login) HashCost() int {
	hash := l.hash
	if l.player == nil {
		hash = l.dummy.get()
	}
	c, _ := bcrypt.Cost(hash)
	return c
}

// SetSecrets sets the player's Secrets and cash, for tests that need a
// ranking without playing for it.
func (s *Store) SetSecrets(ctx context.Context, playerID int64, secrets, cash int) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE players SET secrets = ?, cash = ? WHERE id = ?`, secrets, cash, playerID)
		return err
	})
}

// SetHeat sets the source's heat, for tests of a hot source.
func (s *Store) SetHeat(ctx context.Context, sourceID int64, heat int) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sources SET heat = ? WHERE id = ?`, heat, sourceID)
		return err
	})
}

// AddReports stores n reports of spy orders by actor on target, dated
// Options.Now, without playing them, for tests that need many reports.
func (s *Store) AddReports(ctx context.Context, actorID, targetID int64, n int) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		for range n {
			r := &Report{Tick: 1, Kind: Spy, Actor: Player{ID: actorID, Name: "actor", Faction: FBI},
				Target: Player{ID: targetID, Name: "target", Faction: MIB}, Odds: 0.5, AttackRoll: 1, DefenceRoll: 1}
			if err := insertReport(ctx, tx, r, s.now()); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddMessages stores n private messages from one player to another, dated
// Options.Now, without the rate limit, for tests that need many messages.
func (s *Store) AddMessages(ctx context.Context, fromID, toID int64, n int) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		for i := range n {
			if err := insertMessage(ctx, tx, fromID, toID, fmt.Sprint("message ", i), s.now()); err != nil {
				return err
			}
		}
		return nil
	})
}

// AddChannelPosts stores bodies as posts by the player on the channel of
// faction only (counted unread by its other players), dated Options.Now and
// in order, without the posting cooldown.
func (s *Store) AddChannelPosts(ctx context.Context, playerID int64, only Faction, bodies []string) error {
	return s.update(ctx, func(tx *sql.Tx) error {
		for _, body := range bodies {
			if err := insertPost(ctx, tx, playerID, body, only, s.now()); err != nil {
				return err
			}
		}
		return nil
	})
}

// Pragma reads PRAGMA name on the Store's own connection.
func (s *Store) Pragma(ctx context.Context, name string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `PRAGMA `+name).Scan(&v)
	return v, err
}

// PrunePlans returns, for each history the tick prunes, SQLite's query
// plan (EXPLAIN QUERY PLAN, its details one a line) of the count of the
// groups to prune and of their prune, for a tick's prune of the rows
// written since the last one.
func (s *Store) PrunePlans(ctx context.Context) (map[string]string, error) {
	plans := map[string]string{}
	for _, h := range histories {
		for _, q := range []struct {
			sql  string
			args []any
		}{{h.groupsSQL(), []any{0, 1, 0, 1}}, {h.pruneSQL(false), []any{0, 1, 0, 1, h.keep}}} {
			rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q.sql, q.args...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					rows.Close()
					return nil, err
				}
				plans[h.name] += detail + "\n"
			}
			if err := rows.Close(); err != nil {
				return nil, err
			}
		}
	}
	return plans, nil
}
