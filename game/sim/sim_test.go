package sim_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// balanceRounds is how many rounds TestBalance plays at each size: enough
// that a share's binomial standard error is about 2 points at every size
// (a strategy plays a third of the games at 2 players, and every game at
// 6 or more), in under a minute with -race.
var balanceRounds = map[int]int{2: 1500, 3: 1000, 4: 600, 6: 400, 10: 200, 20: 120}

// knownMisses are the balance targets the rules still miss at the test's
// seed, by size, strategy and target ("2 balanced head to head"): open
// work. TestBalance fails on any other miss, so balance can only get
// better; a known miss that no longer happens must be struck from this
// list. None is open (issue 17's last two were struck in December 2026).
var knownMisses = map[string]bool{}

func missKey(m sim.Miss) string { return fmt.Sprintf("%d %s %s", m.Players, m.Strategy, m.Target) }

// TestBalance plays a seeded batch of rounds at each of sim.BalanceSizes
// (2 to 20 players; balanceRounds at each) on the real rules and checks
// the balance targets (sim.SizeTable.Check) at each: no strategy wins more
// than 40% of its games at 3 or more players, or 60% head to head at 2;
// the turtle wins within 2x of the average; the casual player (once a day)
// finishes in the top half at least 30% of the time. It also measures what
// spying earns: at the same tables, a raider who spies and one who steals
// blind. `make simulate` prints the full tables.
func TestBalance(t *testing.T) {
	var tables []sim.SizeTable
	for _, n := range sim.BalanceSizes {
		cfg := sim.Config{Rounds: balanceRounds[n], Seed: 1, Strategies: sim.Strategies()}
		tables = append(tables, sim.RunSizes(cfg, []int{n})...)
	}
	seen := map[string]bool{}
	for _, tab := range tables {
		for _, r := range tab.Rows {
			t.Logf("%2d players: %-12s win %3.0f%% +- %.0f  top half %3.0f%%  median %d Secrets, stole %.1f", tab.Players,
				r.Strategy, 100*r.WinRate, 100*stdErr(r.WinRate, r.Games), 100*r.TopHalf, r.MedianSecrets, r.Stole)
			require.Positive(t, r.Games, "%d players: %s", tab.Players, r.Strategy)
		}
		assert.Positive(t, tab.Stats.StealWins, "%d players: nobody stole", tab.Players)
		for _, m := range tab.Misses {
			seen[missKey(m)] = true
			if knownMisses[missKey(m)] {
				t.Logf("known miss: %s", m)
				continue
			}
			t.Errorf("balance target missed: %s", m)
		}
	}
	for k := range knownMisses {
		assert.True(t, seen[k], "%q is met now: strike it from knownMisses", k)
	}

	// Spying earns its AP: at the same tables, the raider who spies wins
	// more than the one who steals on a guess.
	ab := sim.RunSizes(sim.Config{Rounds: 60, Seed: 2, Strategies: sim.WithBlindRaider(sim.Strategies())}, sim.BalanceSizes)
	spying, games := sim.Pooled(ab, "raider")
	blind, blindGames := sim.Pooled(ab, "blind-raider")
	t.Logf("raider wins %d of %d games spying, %d of %d blind", spying, games, blind, blindGames)
	assert.Greater(t, float64(spying)/float64(games), float64(blind)/float64(blindGames),
		"spying earns its AP: a thief who cases the place beats one who goes in blind (game.BlindDefence)")
}

// stdErr is the binomial standard error of a share p of n trials.
func stdErr(p float64, n int) float64 { return math.Sqrt(p * (1 - p) / float64(n)) }

// TestRun_Seeded checks a seed replays a batch exactly, and another seed
// plays differently.
func TestRun_Seeded(t *testing.T) {
	cfg := sim.Config{Rounds: 3, Seed: 9, MinPlayers: 4, MaxPlayers: 8, RoundTicks: 300, Strategies: sim.Strategies()}
	a, b := sim.Run(cfg), sim.Run(cfg)
	assert.Equal(t, a, b)
	cfg.Seed++
	assert.NotEqual(t, a, sim.Run(cfg))
}

// TestSourcePrices checks the simulation's sources are the ones a new game
// file is seeded with.
func TestSourcePrices(t *testing.T) {
	s, err := game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{BcryptCost: bcrypt.MinCost})
	require.NoError(t, err)
	defer s.Close()
	sources, err := s.Sources(context.Background())
	require.NoError(t, err)
	var prices []int
	for _, src := range sources {
		prices = append(prices, src.BasePrice)
	}
	assert.Equal(t, sim.SourcePrices, prices)
}
