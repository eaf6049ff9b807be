package game

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// insertRound keeps a finished round in the hall of fame. A round already
// kept (two stores racing on one file cannot both end it, but a restored
// backup may replay one) is replaced.
func insertRound(ctx context.Context, tx *sql.Tx, r *RoundResult) error {
	var winner any // NULL: level
	if r.Winner != "" {
		winner = string(r.Winner)
	}
	var fbi, mib FactionTotal
	for _, f := range r.Factions {
		switch f.Faction {
		case FBI:
			fbi = f
		case MIB:
			mib = f
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO rounds (round, ended_tick, ended_at, winner,
		fbi_players, fbi_secrets, mib_players, mib_secrets) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Round, r.EndTick, unixNano(r.EndedAt), winner, fbi.Players, fbi.Secrets, mib.Players, mib.Secrets); err != nil {
		return fmt.Errorf("insert round %d: %w", r.Round, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM placings WHERE round = ?`, r.Round); err != nil {
		return fmt.Errorf("insert round %d: %w", r.Round, err)
	}
	for i, p := range r.Top {
		if _, err := tx.ExecContext(ctx, `INSERT INTO placings (round, seq, place, player_id, name, faction, secrets, cash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.Round, i+1, p.Place, p.PlayerID, p.Name, p.Faction, p.Secrets, p.Cash); err != nil {
			return fmt.Errorf("insert round %d: %w", r.Round, err)
		}
	}
	return nil
}

// HallOfFame returns every finished round, the latest first, each with its
// winning faction and top RoundTop players, from the read cache until a
// write changes it (the slice is shared: do not modify it). Nothing is
// pruned: a round is one row and ten placings.
func (s *Store) HallOfFame(ctx context.Context) ([]RoundResult, error) {
	return cached(ctx, s, cacheKey{kind: "hall"}, []tag{{kind: tagRounds}}, s.readHallOfFame)
}

func (s *Store) readHallOfFame(ctx context.Context) ([]RoundResult, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT round, ended_tick, ended_at, coalesce(winner, ''),
		fbi_players, fbi_secrets, mib_players, mib_secrets FROM rounds ORDER BY round DESC`)
	rounds, err := collect(rows, err, func(row scanner) (*RoundResult, error) {
		r := RoundResult{Factions: []FactionTotal{{Faction: FBI}, {Faction: MIB}}}
		var at int64
		err := row.Scan(&r.Round, &r.EndTick, &at, &r.Winner,
			&r.Factions[0].Players, &r.Factions[0].Secrets, &r.Factions[1].Players, &r.Factions[1].Secrets)
		r.EndedAt = fromNano(at)
		return &r, err
	})
	if err != nil {
		return nil, wrap("hall of fame", err)
	}
	placings, err := s.placings(ctx, `ORDER BY round DESC, seq`)
	if err != nil {
		return nil, wrap("hall of fame", err)
	}
	byRound := make(map[int]*RoundResult, len(rounds))
	for i := range rounds {
		byRound[rounds[i].Round] = &rounds[i]
	}
	for _, p := range placings {
		if r := byRound[p.Round]; r != nil {
			r.Top = append(r.Top, p)
		}
	}
	return rounds, nil
}

// placings reads the placings the clause (WHERE ..., ORDER BY ...) selects.
func (s *Store) placings(ctx context.Context, clause string, args ...any) ([]Placing, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT round, place, coalesce(player_id, 0), name, faction, secrets, cash
		FROM placings `+clause, args...)
	return collect(rows, err, func(row scanner) (*Placing, error) {
		var p Placing
		return &p, row.Scan(&p.Round, &p.Place, &p.PlayerID, &p.Name, &p.Faction, &p.Secrets, &p.Cash)
	})
}

// Profile returns what anyone may see of the player called name
// (case-insensitive): the stats the ranking shows, the place in it, every
// finished round the player reached the top RoundTop of, the rounds won,
// and the latest ProfilePosts posts on the public board (never the
// faction-only channel), from the read cache until a write changes it (shared:
// do not modify it). Errors: ENOTFOUND for no such player.
func (s *Store) Profile(ctx context.Context, name string) (*Profile, error) {
	return cachedBy(ctx, s, cacheKey{kind: "profile", name: strings.ToLower(name)}, name, s.readProfileTagged)
}

// readProfileTagged is readProfile with its tags: the player's row (and
// their faction's, for unread_faction), its place in the ranking, its
// public posts and its placings.
func (s *Store) readProfileTagged(ctx context.Context, name string) (*Profile, []tag, error) {
	pr, err := s.readProfile(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return pr, []tag{{tagPlayer, pr.Player.ID}, {tagMembers, factionTag(pr.Player.Faction)}, {kind: tagRoster},
		{kind: tagSecrets}, {tagBoard, 0}, {kind: tagRounds}}, nil
}

func (s *Store) readProfile(ctx context.Context, name string) (*Profile, error) {
	p, err := scanPlayer(s.db.QueryRowContext(ctx, `SELECT `+playerColumns+` FROM players p WHERE p.name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "There is no agent called %q.", name)
	} else if err != nil {
		return nil, wrap("profile", err)
	}
	pr := &Profile{Player: *p}
	// The place, shared with players level on Secrets (SharedPlaces).
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM players WHERE secrets > ?1) + 1,
		(SELECT count(*) FROM players)`, p.Secrets).Scan(&pr.Place, &pr.Players); err != nil {
		return nil, wrap("profile", err)
	}
	if pr.Placings, err = s.placings(ctx, `WHERE player_id = ? ORDER BY round DESC`, p.ID); err != nil {
		return nil, wrap("profile", err)
	}
	// Won: first, holding a Secret, and nobody sharing the place
	// (RoundResult.Champion).
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM placings w WHERE w.player_id = ? AND w.place = 1
		AND w.secrets > 0 AND NOT EXISTS (SELECT 1 FROM placings o WHERE o.round = w.round AND o.seq != w.seq
		AND o.place = w.place)`, p.ID).Scan(&pr.RoundsWon); err != nil {
		return nil, wrap("profile", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT o.id, p.name, p.faction, 0, o.body, o.at
		FROM posts o JOIN players p ON p.id = o.player_id
		WHERE o.player_id = ? AND o.faction IS NULL ORDER BY o.id DESC LIMIT ?`, p.ID, ProfilePosts)
	if pr.Posts, err = collect(rows, err, scanPost); err != nil {
		return nil, wrap("profile", err)
	}
	return pr, nil
}

// HallCareers is how many careers the hall of fame lists.
const HallCareers = 20

// Careers returns the best limit careers (limit < 1: none) of players who
// played a round to its end: by wins, then gold, silver and bronze medals,
// then the best place, then rounds played (CareerRanks), and of level
// careers, the players who enlisted first, never by name. From the read
// cache until a write changes them; do not modify the slice.
func (s *Store) Careers(ctx context.Context, limit int) ([]Player, error) {
	if limit < 1 {
		return nil, nil
	}
	return cached(ctx, s, cacheKey{kind: "careers", n: limit}, []tag{{kind: tagAnyPlayer}}, func(ctx context.Context) ([]Player, error) {
		rows, err := s.db.QueryContext(ctx, `SELECT `+playerColumns+` FROM players p WHERE p.rounds_played > 0
			ORDER BY p.rounds_won DESC, p.gold DESC, p.silver DESC, p.bronze DESC, p.best_place, p.rounds_played DESC,
			p.id LIMIT ?`, limit)
		ps, err := collect(rows, err, func(row scanner) (*Player, error) { return scanPlayer(row) })
		return ps, wrap("careers", err)
	})
}

// CareerRanks returns the rank of each of careers, in the order of Careers
// from the best: a career level with the one before on every count Careers
// orders by (wins, medals, best place, rounds played) shares its rank, and
// the next is ranked as if they were not level (1, 1, 3).
func CareerRanks(careers []Player) []int {
	ranks := make([]int, len(careers))
	for i, p := range careers {
		ranks[i] = i + 1
		if i > 0 && p.Career == careers[i-1].Career {
			ranks[i] = ranks[i-1]
		}
	}
	return ranks
}
