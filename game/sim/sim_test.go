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
// seed, by size, strategy and target ("2 trader head to head"): open
// work. TestBalance fails on any other miss, so balance can only get
// better; a known miss that no longer happens must be struck from this
// list. Issue 30's rules (the broker, the defender's moves, cash as the
// limit, a lone bid at the broker's only at the reserve, thieves who may
// rob only players ahead of them, catch-up pay only up to the price of
// the Secrets behind, a bid's cash counted toward the cash cap, raised
// to $900, no theft while the thief's cash would buy the gap) meet the
// targets for the searched best response at every size and for every
// strategy at 3 players, and the round's last auction bidding everyone's
// cash (game.LastAuctionCashPercent) the casual player's top half at 2
// players; what is left: at 10 and 20 players
// the stealing scripts (the balanced script among them at 20: 3% of 120
// games, as in make simulate's runs at seeds 1 and 3 before the last
// auction bid the cash), the rumor-monger and the trader: there a theft
// takes from one of many rivals, and the plain buyer (the turtle, the
// bidder) wins most.
// Constants tried against them (game/sim, 150 to 300 rounds a size: a
// longer alert, a shorter or longer cooldown, cheaper agents, a cover
// payment to the robbed, a cash cap of a day's pay, more catch-up pay,
// catch-up pay only past a Secret behind or none while a thief lies low,
// dearer guards, fortifying at a price rising with security, more
// Secrets in rumors, a thief's bonus against a player far ahead; this
// session: a cooldown shrinking with the table, scarcer Secrets at the
// sources, thieves who may rob only players two Secrets ahead, a tie for
// first broken by cash or by who held the count longest) moved a miss
// from one script to another, not away.
// Why the floor is hard at 10 and 20 players (game/sim, 300 rounds, seed
// 1): about 40% of rounds ended level at the top, at every size, and a
// level first place was won by nobody, so at 20 players ten scripts shared
// some 60% of the wins, 6% each on average, and nine must reach 5%. A
// tie-break would widen that pool, but it shows what the ties hide at 2
// players: the raider and the balanced script lose only ~9% of their
// head-to-head games outright (44-46% won, ~47% level), since a theft
// from a player ahead brings a behind thief level; with ties broken by
// cash or by who held the count longest they win 71-76%. Tie-breaks
// tried (make simulate, 300 rounds a size, misses on seeds 1/2/3 against
// 10/11/14 with none): fewer Secrets stolen 10/11/10 (but rumor-monger
// 69% head to head), more stolen 11/13/12, fewer lost 13/13/13, more lost
// 8/10/11 (rumor-monger 50-57% at 3), the count reached first 11/14/11
// or last 10/13/10 and held longest 9/12/13 (each 100% decided: the
// stealing scripts 62-76% head to head), most bought from the broker
// 9/14/12, a shared title (1/k of a win each) 9/14/11, and a Secret
// bought at the round's last auction 7/8/10 (75-83% of rounds decided),
// the rule the game now keeps (game.Rank: 7/7/10, no new 2-player miss;
// it took the daily raider at 6 off this list). A theft from
// the round's leader at 10 players or more bringing the thief a Secret
// more (misses 12, 12, 12 on seeds 1-3, against 13, 13, 14) lifted the
// raider to 14-22% and the sniper to 6-8% at 10 and 20 and pushed the
// trader, the rumor-monger and the fortress under 5%: the same pool,
// shared otherwise. The 2-player game's parity came next: a thief facing
// the security twice head to head and $80 catch-up pay there
// (game.DuoSecurity, game.DuoCatchUpPay) took the searched best response
// at 2 players under 60% on every seed (make simulate, seeds 1-3: 40,
// 34, 34%, against 43, 61, 62% with the tie-break alone; misses 7/6/9
// against 7/7/10, none new); nothing on this list is at 2 players.
// Measured next, not yet built (2026-12-08, a hack switched by
// environment variables; misses on seeds 1/2/3 of make simulate 0/0/2
// against 7/6/9, TestBalance's own settings none): at tables of 10 or
// more, (1) a thief's agents lie low 144 ticks after a theft, not 72;
// (2) a thief robbing a player 2 or more Secrets ahead adds 4 to the roll
// (public counts only, so the dossier page can show the odds); (3) of
// players level on Secrets and on the last lot, the one who bought fewer
// Secrets (sources and broker, both in the news) places ahead. Each is
// needed: without (3) 5/6/5 misses at 10 and 20 (1,000 rounds), with the
// 72-tick cooldown 2/2/2, without (2) 6/5/5 (the turtle at 19-30%); a
// bonus of players/2 or against any target let the turtle or a searched
// blind thief out of bounds. Why the stealing scripts lose at big tables:
// their AP go to spying and stealing (48 of the raider's 141), not to
// rumors ($21 an AP), so they buy 8.7 Secrets to the turtle's 14.5; they
// rob the weak (security 1: the trader and rumor-monger lose 4 each), not
// the winners (the turtle at security 5 loses 1.1), and end 2 or more
// behind the top in 67-98% of rounds.
var knownMisses = map[string]bool{
	"10 raider least win share":       true,
	"10 daily-raider least win share": true,
	"10 sniper least win share":       true,
	"20 trader least win share":       true,
	"20 raider least win share":       true,
	"20 balanced least win share":     true,
	"20 rumor-monger least win share": true,
	"20 daily-raider least win share": true,
	"20 sniper least win share":       true,
}

func missKey(m sim.Miss) string { return fmt.Sprintf("%d %s %s", m.Players, m.Strategy, m.Target) }

// testSearch is the family search TestBalance makes at each size: a
// small one (make simulate runs the full search).
var testSearch = sim.SearchOptions{Rounds: 16, Confirm: 80, Starts: 2, Passes: 1}

// TestBalance plays a seeded batch of rounds at each of sim.BalanceSizes
// (2 to 20 players; balanceRounds at each) on the real rules, searches the
// family for a best response to the named scripts (a small search), and
// checks the balance targets (sim.SizeTable.Check) at each: no strategy,
// named or searched, wins more than 40% of its games at 3 or more players,
// or 60% head to head at 2; every named script but the casual player wins
// at least 5%; the casual player (once a day) finishes in the top half at
// least 30% of the time and never lost more than one Secret between two
// check-ins; sources burn and steals fail. It also measures what spying
// earns: at the same tables, a raider who spies and one who steals blind.
// `make simulate` prints the full tables.
func TestBalance(t *testing.T) {
	var tables []sim.SizeTable
	for _, n := range sim.BalanceSizes {
		cfg := sim.Config{Rounds: balanceRounds[n], Seed: 1, Strategies: sim.Strategies()}
		tables = append(tables, sim.RunSizes(cfg, []int{n}, testSearch)...)
	}
	seen := map[string]bool{}
	for _, tab := range tables {
		for _, r := range tab.Rows {
			t.Logf("%2d players: %-12s win %3.0f%% +- %.0f  top half %3.0f%%  median %d Secrets, stole %.1f", tab.Players,
				r.Strategy, 100*r.WinRate, 100*stdErr(r.WinRate, r.Games), 100*r.TopHalf, r.MedianSecrets, r.Stole)
			require.Positive(t, r.Games, "%d players: %s", tab.Players, r.Strategy)
		}
		b := tab.Best
		t.Logf("%2d players: searched %s: win %.0f%% +- %.0f", tab.Players, b.Params.Name(), 100*b.WinRate, 100*stdErr(b.WinRate, b.Games))
		t.Logf("%2d players: steals failed %.0f%%, haggles burned %.1f%%", tab.Players, 100*tab.StealFailShare, 100*tab.BurnShare)
		assert.Positive(t, tab.Stats.StealWins, "%d players: nobody stole", tab.Players)
		assert.Positive(t, tab.Stats.Lots, "%d players: the broker sold nothing", tab.Players)
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
	ab := sim.RunSizes(sim.Config{Rounds: 60, Seed: 2, Strategies: sim.WithBlindRaider(sim.Strategies())}, sim.BalanceSizes, sim.SearchOptions{})
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

// TestSearch checks the family search is seeded (the same config finds
// the same best response, however many workers play it) and finds what
// wins: against a field that never buys a Secret, its best response wins
// nearly every game.
func TestSearch(t *testing.T) {
	idle := sim.Strategy{Name: "idle", Every: 144, Next: func(*sim.Game, *game.Player) (game.Action, bool) { return game.Action{}, false }}
	cfg := sim.SearchConfig{Players: 3, Seed: 4, Rounds: 6, Confirm: 20, Starts: 3, Passes: 1, RoundTicks: 300,
		Field: []sim.Strategy{idle}, Space: sim.DefaultSpace(), Workers: 1}
	a := sim.Search(cfg)
	cfg.Workers = 3
	b := sim.Search(cfg)
	assert.Equal(t, a, b)
	assert.Equal(t, 20, a.Games, "one seat of every confirming round")
	assert.GreaterOrEqual(t, a.WinRate, 0.9, "%s against players who never buy", a.Params.Name())
	assert.Positive(t, a.Tried)
}

// TestSearch_StartsFromTheField checks the search never reports a best
// response worse than the field's own members of the family: the named
// raider, alone in the field at 2 players, is among its starts, so the
// best found wins at least as often as the raider does against itself.
func TestSearch_StartsFromTheField(t *testing.T) {
	raider := sim.Strategies()[1]
	require.NotNil(t, raider.Params, "the raider is a member of the family")
	cfg := sim.SearchConfig{Players: 2, Seed: 5, Rounds: 10, Confirm: 40, Starts: 0, Passes: 0, RoundTicks: 300,
		Field: []sim.Strategy{raider}, Space: sim.DefaultSpace()}
	best := sim.Search(cfg)
	assert.Equal(t, 2, best.Tried, "the middle of the space and the raider")
}

// TestPlayAgainst checks the candidate takes exactly one seat of every
// round, the others drawn from the field.
func TestPlayAgainst(t *testing.T) {
	p := sim.Params{Every: 36, Security: 3, Agents: 2, Pay: 100}
	row := sim.PlayAgainst(p.Strategy(), sim.Strategies(), sim.Config{Rounds: 5, Seed: 3, MinPlayers: 4, MaxPlayers: 4, RoundTicks: 200})
	assert.Equal(t, 5, row.Seats)
	assert.Equal(t, 5, row.Games)
	assert.Equal(t, p.Name(), row.Strategy)
}
