package sim_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// TestBalance plays a small seeded batch of mixed rounds (4 to 20 players,
// every strategy at the table) on the real rules and checks the balance
// targets: no pure strategy wins more than 40% of the games it plays in,
// the casual player (once a day) finishes in the top half about a third of
// the time, and raiding pays. `go run ./cmd/simulate` prints the full table.
func TestBalance(t *testing.T) {
	tab := sim.Run(sim.Config{Rounds: 60, Seed: 1, MinPlayers: 4, MaxPlayers: 20, Strategies: sim.Strategies()})
	for _, r := range tab.Rows {
		t.Logf("%-12s win %3.0f%%  top half %3.0f%%  median %d Secrets, stole %.1f", r.Strategy, 100*r.WinRate,
			100*r.TopHalf, r.MedianSecrets, r.Stole)
		require.Positive(t, r.Games, r.Strategy)
		assert.LessOrEqual(t, r.WinRate, 0.40, "%s wins too often", r.Strategy)
	}
	casual := tab.Row("casual")
	assert.GreaterOrEqual(t, casual.TopHalf, 0.30, "the casual player is out of reach of the median")
	assert.Positive(t, casual.Wins, "the casual player never wins")
	raider := tab.Row("raider")
	assert.GreaterOrEqual(t, raider.WinRate, 0.10, "raiding is no real option")
	assert.GreaterOrEqual(t, raider.Stole, 10.0, "raiders hardly steal")
	assert.Greater(t, tab.Stats.StealWins, 0)
}

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
