package game

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// What Seed writes for each seeded player, and in all.
const (
	SeedFeedLines = 10 // feed lines per seeded player
	SeedIntel     = 3  // dossiers each seeded player holds on the other faction
	seedPrefix    = "agent"
)

// SeedStats says what Seed wrote.
type SeedStats struct {
	Players, FeedLines, News, Posts, Intel int
}

// Seed adds n players to the game in one transaction, so that load tests
// and demonstrations meet a world of a realistic size: players named
// "agent0001" and up (numbered after the players already there), FBI and
// MIB in turn, with a spread of secrets, cash, agents and security drawn
// from the store's random source; SeedFeedLines lines in each one's feed,
// SeedIntel dossiers each on players of the other faction, and the news and
// the board filled to what the tick keeps (KeepNews lines, KeepPosts posts,
// a tenth of them faction-only). It writes no live-page changes: open
// streams are not told.
//
// Every seeded player has the same password hash, of a random password
// nobody is told: nobody can log in as them, and seeding 1,500 players
// costs one bcrypt hash, not 1,500 (a few hundred ms in all).
//
// Errors: EINVALID for n < 1; ECONFLICT when a name it would give is taken
// (nothing is written then).
func (s *Store) Seed(ctx context.Context, n int) (SeedStats, error) {
	if n < 1 {
		return SeedStats{}, Errorf(EINVALID, "Seed wants at least one player, not %d.", n)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(crand.Text()), s.opt.BcryptCost)
	if err != nil {
		return SeedStats{}, fmt.Errorf("game: seed: %w", err)
	}
	var st SeedStats
	err = s.update(ctx, func(tx *sql.Tx) error {
		c, err := readClock(ctx, tx, s.clockStmt)
		if err != nil {
			return err
		}
		sd := seeder{ctx: ctx, tx: tx, tick: c.Tick, now: s.now().UTC(), stats: &st}
		s.random(func(r *rand.Rand) { sd.rng = rand.New(rand.NewPCG(r.Uint64(), r.Uint64())) })
		if err := sd.seed(n, hash); err != nil {
			return err
		}
		// Now, not in the next tick, on the server's loop: pruning the
		// feeds of 10,000 new players the first time holds it about 25 ms.
		return s.pruneHistories(ctx, tx)
	})
	if err != nil {
		return SeedStats{}, wrap("seed", err)
	}
	return st, nil
}

// seeder writes one Seed transaction.
type seeder struct {
	ctx   context.Context
	tx    *sql.Tx
	rng   *rand.Rand
	tick  int64
	now   time.Time
	stats *SeedStats
	fbi   []int64 // the seeded players' ids by faction
	mib   []int64
}

func (sd *seeder) seed(n int, hash []byte) error {
	var first int
	if err := sd.tx.QueryRowContext(sd.ctx, `SELECT count(*) FROM players`).Scan(&first); err != nil {
		return err
	}
	for i := range n {
		if err := sd.player(fmt.Sprintf("%s%04d", seedPrefix, first+i+1), []Faction{FBI, MIB}[i%2], hash); err != nil {
			return err
		}
	}
	if err := sd.intel(); err != nil {
		return err
	}
	return sd.board()
}

// at is a time in the last day, for a seeded line.
func (sd *seeder) at() int64 {
	return unixNano(sd.now.Add(-time.Duration(sd.rng.Int64N(int64(24 * time.Hour)))))
}

func (sd *seeder) player(name string, f Faction, hash []byte) error {
	p := NewPlayer(name, f, sd.tick)
	p.CreatedAt = sd.now
	p.Secrets, p.Cash = sd.rng.IntN(30), sd.rng.IntN(10000)
	p.Agents, p.Security = 1+sd.rng.IntN(20), sd.rng.IntN(10)
	if err := insertPlayer(sd.ctx, sd.tx, &p, hash); err != nil {
		return err
	}
	if f == FBI {
		sd.fbi = append(sd.fbi, p.ID)
	} else {
		sd.mib = append(sd.mib, p.ID)
	}
	sd.stats.Players++
	for j := range SeedFeedLines {
		if err := sd.event(p.ID, fmt.Sprintf("Field report %d: your agents watched a warehouse in sector %d all night.",
			j+1, sd.rng.IntN(100))); err != nil {
			return err
		}
		sd.stats.FeedLines++
	}
	return nil
}

func (sd *seeder) event(playerID int64, text string) error {
	var player any
	if playerID != 0 {
		player = playerID
	}
	_, err := sd.tx.ExecContext(sd.ctx, `INSERT INTO events (tick, at, player_id, public, text) VALUES (?, ?, ?, ?, ?)`,
		sd.tick, sd.at(), player, playerID == 0, text)
	return err
}

// intel gives each seeded player SeedIntel dossiers on the other faction.
func (sd *seeder) intel() error {
	for _, side := range [][2][]int64{{sd.fbi, sd.mib}, {sd.mib, sd.fbi}} {
		spies, targets := side[0], side[1]
		if len(targets) == 0 {
			continue
		}
		for _, spy := range spies {
			for range min(SeedIntel, len(targets)) {
				target := targets[sd.rng.IntN(len(targets))]
				_, err := sd.tx.ExecContext(sd.ctx, `INSERT OR IGNORE INTO intel (player_id, target_id, cash, agents, security,
					secrets, ap, tick, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, spy, target, sd.rng.IntN(10000),
					1+sd.rng.IntN(20), sd.rng.IntN(10), sd.rng.IntN(30), StartAP, sd.tick, sd.at())
				if err != nil {
					return err
				}
				sd.stats.Intel++
			}
		}
	}
	return nil
}

// board fills the news and the board to what the tick keeps.
func (sd *seeder) board() error {
	all := append(append([]int64(nil), sd.fbi...), sd.mib...)
	for i := range KeepNews {
		if err := sd.event(0, fmt.Sprintf("Lights over Nevada again: witness %d saw them for %d minutes.", i+1, 1+sd.rng.IntN(60))); err != nil {
			return err
		}
		sd.stats.News++
	}
	for i := range KeepPosts {
		author := all[sd.rng.IntN(len(all))]
		var only any
		if i%10 == 0 {
			var f string
			if err := sd.tx.QueryRowContext(sd.ctx, `SELECT faction FROM players WHERE id = ?`, author).Scan(&f); err != nil {
				return err
			}
			only = f
		}
		if _, err := sd.tx.ExecContext(sd.ctx, `INSERT INTO posts (player_id, body, at, faction) VALUES (?, ?, ?, ?)`,
			author, fmt.Sprintf("Post %d: has anyone else noticed the black helicopters over route %d?", i+1, sd.rng.IntN(100)),
			sd.at(), only); err != nil {
			return err
		}
		sd.stats.Posts++
	}
	return nil
}
