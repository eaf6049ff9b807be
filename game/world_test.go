package game_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world returns a world at tick 20 of a 100-tick round with the given players
// and no sources.
func world(players ...game.Player) *game.World {
	return &game.World{Clock: game.Clock{Tick: 20, Round: 1, RoundTicks: 100}, Players: players}
}

// TestCatchUp checks the catch-up pay: CatchUpPay per Secret behind the
// leader (DuoCatchUpPay in a game of two), shared over the other players,
// capped at CatchUpMax.
func TestCatchUp(t *testing.T) {
	require.Equal(t, 2, game.DuoTable, "the cases below are head to head")
	for _, tc := range []struct {
		behind, players, pay int
	}{
		// Ensure the leader, and anyone level with them, gets nothing.
		{0, 2, 0}, {-3, 2, 0}, {0, 3, 0},
		// Ensure head to head the trailing player gets DuoCatchUpPay a
		// Secret whole, up to the cap.
		{1, 2, game.DuoCatchUpPay}, {1000, 2, game.CatchUpMax},
		{2, 2, min(game.CatchUpMax, 2*game.DuoCatchUpPay)},
		// Ensure a bigger table shares CatchUpPay over the rivals for first place (rounded down).
		{1, 3, game.CatchUpPay / 2}, {4, 3, 4 * game.CatchUpPay / 2}, {3, 20, 3 * game.CatchUpPay / 19}, {1, 1, game.CatchUpPay},
	} {
		assert.Equal(t, tc.pay, game.CatchUp(tc.behind, tc.players), "%d behind at %d players", tc.behind, tc.players)
	}
}

// TestWorld_Advance_CatchUp checks a payday pays the player behind the
// leader their catch-up pay, and the leader none.
func TestWorld_Advance_CatchUp(t *testing.T) {
	lead, behind := alice(), alice()
	lead.ID, lead.Name, lead.Secrets = 2, "leader", 5
	behind.Secrets = 2
	w := world(behind, lead)
	w.Clock.Tick = 23
	w.Advance(&Dice{tb: t})
	pay := game.BaseIncome - game.AgentUpkeep*2 - game.GuardUpkeep*1 + game.SecretIncome*2
	assert.Equal(t, 300+pay+game.CatchUp(3, 2), w.Players[0].Cash, "3 Secrets behind")
	assert.Equal(t, 300+pay+3*game.SecretIncome, w.Players[1].Cash, "the leader")

	// Ensure head to head it is DuoCatchUpPay a Secret behind, and at a
	// table of three CatchUpPay shared over the two rivals.
	for _, players := range []int{2, 3} {
		behind := alice()
		behind.Secrets = 4
		w := world(behind, lead)
		for i := 3; i <= players; i++ {
			other := alice()
			other.ID, other.Name, other.Secrets = int64(i), fmt.Sprintf("other%d", i), 5
			w.Players = append(w.Players, other)
		}
		w.Clock.Tick = 23
		w.Advance(&Dice{tb: t})
		want := game.DuoCatchUpPay
		if players > 2 {
			want = game.CatchUpPay / (players - 1)
		}
		assert.Equal(t, 300+pay+2*game.SecretIncome+want, w.Players[0].Cash, "1 Secret behind at %d players", players)
	}
}

// TestWorld_Advance_CatchUpCeiling checks catch-up pay stops at what buys
// back the Secrets behind at the cheapest source: it takes a trailing
// player's cash up to that and no further, and a player holding that much
// already gets none; a burned or sold-out source is not on sale.
func TestWorld_Advance_CatchUpCeiling(t *testing.T) {
	pay := game.BaseIncome - game.AgentUpkeep*2 - game.GuardUpkeep*1
	sources := []game.Source{{ID: 1, Secrets: 1, Price: 320}, {ID: 2, Secrets: 0, Price: 100}, {ID: 3, Secrets: 2, Price: 150, BurnedUntil: 30}}
	assert.Equal(t, 320, game.Cheapest(sources, 24))
	assert.Equal(t, 150, game.Cheapest(sources, 30), "back from being burned")
	assert.Zero(t, game.Cheapest(sources[1:2], 24), "nothing on sale")
	require.Less(t, pay+game.CatchUp(1, 2), 320, "the case Broke needs the price above a payday's pay")
	for _, tc := range []struct {
		name            string
		behind          int
		cash, want, bid int
	}{
		{"Broke", 1, 0, pay + game.CatchUp(1, 2), 0},             // the whole catch-up pay, under the price
		{"NearThePrice", 1, 300, 320, 0},                         // up to the price of one Secret, no further
		{"AtThePrice", 1, 320, 320 + pay, 0},                     // pay, no catch-up
		{"AboveThePrice", 1, 500, 500 + pay, 0},                  // likewise
		{"IncomeAboveThePrice", 1, 320 - pay + 1, 320 + 1, 0},    // pay alone passes it
		{"TwoBehind", 2, 300, 300 + pay + game.CatchUp(2, 2), 0}, // two Secrets' price: room for it all
		{"BidCounts", 1, 100, 100 + pay, 220},                    // $100 and a bid of $220 buy the Secret back: pay, no catch-up
		{"BidUnderThePrice", 1, 100, 120, 200},                   // up to the price, the bid counted
	} {
		t.Run(tc.name, func(t *testing.T) {
			lead, behind := alice(), alice()
			lead.ID, lead.Name, lead.Secrets = 2, "leader", 5
			behind.Secrets, behind.Cash, behind.Bid = 5-tc.behind, tc.cash, tc.bid
			w := world(behind, lead)
			w.Sources = slices.Clone(sources)
			w.Clock.Tick = 23
			w.Advance(&Dice{tb: t, values: []int{1, 1}}) // sources 1 and 2 find no Secret
			assert.Equal(t, tc.want, w.Players[0].Cash)
		})
	}
}

func TestWorld_Advance_Players(t *testing.T) {
	pay := game.BaseIncome - game.AgentUpkeep*2 - game.GuardUpkeep*1 // alice's income: 2 agents, security 1
	for _, tc := range []struct {
		name    string
		tick    int64 // the tick Advance moves to; default 24, a payday
		edit    func(*game.Player)
		ap      int
		cash    int
		deserts bool   // one agent fewer
		feeding string // the player's feed line, if any
	}{
		// Ensure a payday adds APPerPay AP and BaseIncome + SecretIncome x Secrets
		// - AgentUpkeep x agents - GuardUpkeep x security.
		{name: "Start", ap: 10 + game.APPerPay, cash: 300 + pay},
		{name: "Secrets", edit: func(p *game.Player) { p.Secrets = 3 }, ap: 10 + game.APPerPay, cash: 300 + pay + 3*game.SecretIncome},
		{name: "Security", edit: func(p *game.Player) { p.Security = 4 }, ap: 10 + game.APPerPay, cash: 300 + pay - 3*game.GuardUpkeep},
		// Ensure nothing accrues between paydays.
		{name: "NotPayday", tick: 25, ap: 10, cash: 300},
		{name: "NotPaydayEither", tick: 24 + game.PayTicks - 1, ap: 10, cash: 300},
		{name: "APCapped", edit: func(p *game.Player) { p.AP = game.MaxAP - 1 }, ap: game.MaxAP, cash: 300 + pay},
		{name: "APAtCap", edit: func(p *game.Player) { p.AP = game.MaxAP }, ap: game.MaxAP, cash: 300 + pay},
		{name: "APAboveCapKept", edit: func(p *game.Player) { p.AP = game.MaxAP + 5 }, ap: game.MaxAP + 5, cash: 300 + pay},
		{name: "UpkeepEatsCash", edit: func(p *game.Player) { p.Agents, p.Cash = 30, 100 }, ap: 10 + game.APPerPay,
			cash: 100 + game.BaseIncome - 30*game.AgentUpkeep - game.GuardUpkeep},
		{name: "UpkeepJustPaid", edit: func(p *game.Player) { p.Agents, p.Cash = 30, 30*game.AgentUpkeep+game.GuardUpkeep-game.BaseIncome },
			ap: 10 + game.APPerPay, cash: 0},
		// Ensure cash never goes negative, and unpaid upkeep costs an agent.
		{name: "UpkeepUnpaid", edit: func(p *game.Player) { p.Agents, p.Cash = 30, 10 }, ap: 10 + game.APPerPay, cash: 0,
			deserts: true, feeding: "Unpaid, one of your agents walked out."},
		{name: "ProtectionEnds", edit: func(p *game.Player) { p.ProtectedUntil = 24 }, ap: 10 + game.APPerPay, cash: 300 + pay,
			feeding: "Your protection from theft has ended"},
		{name: "ProtectionEndsOffPayday", tick: 25, edit: func(p *game.Player) { p.ProtectedUntil = 25 }, ap: 10, cash: 300,
			feeding: "Your protection from theft has ended"},
		{name: "ProtectionLasts", edit: func(p *game.Player) { p.ProtectedUntil = 25 }, ap: 10 + game.APPerPay, cash: 300 + pay},
		// Ensure pay stops at MaxCash, cash above it (a rumor's) is kept
		// but for the wages, and the cash set aside in a bid counts toward
		// the cap: a bid held over a payday carries no pay past it.
		{name: "CashCapped", edit: func(p *game.Player) { p.Cash = game.MaxCash - 1 }, ap: 10 + game.APPerPay, cash: game.MaxCash},
		{name: "CashAboveCap", edit: func(p *game.Player) { p.Cash = game.MaxCash + 40 }, ap: 10 + game.APPerPay, cash: game.MaxCash + 40},
		{name: "BidUnderCap", edit: func(p *game.Player) { p.Cash, p.Bid = 100, 200 }, ap: 10 + game.APPerPay, cash: 100 + pay},
		{name: "BidCountsTowardCap", edit: func(p *game.Player) { p.Cash, p.Bid = 100, game.MaxCash-100 }, ap: 10 + game.APPerPay, cash: 100},
		{name: "BidNearCap", edit: func(p *game.Player) { p.Cash, p.Bid = 100, game.MaxCash-101 }, ap: 10 + game.APPerPay, cash: 101},
		{name: "BidOverCapWagesPaid", edit: func(p *game.Player) { p.Cash, p.Bid, p.Agents = 100, game.MaxCash, 20 }, ap: 10 + game.APPerPay,
			cash: 100 + game.BaseIncome - 20*game.AgentUpkeep - game.GuardUpkeep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := alice()
			apply(tc.edit, &p)
			agents := p.Agents
			if tc.deserts {
				agents--
			}
			w := world(p)
			if tc.tick == 0 {
				tc.tick = 24
			}
			w.Clock.Tick = tc.tick - 1
			notes := w.Advance(&Dice{tb: t})
			assert.Equal(t, tc.tick, w.Clock.Tick)
			assert.Equal(t, tc.ap, w.Players[0].AP)
			assert.Equal(t, tc.cash, w.Players[0].Cash)
			assert.Equal(t, agents, w.Players[0].Agents)
			if tc.feeding == "" {
				assert.Empty(t, notes)
				return
			}
			require.Len(t, notes, 1)
			assert.Equal(t, int64(1), notes[0].PlayerID)
			assert.Contains(t, notes[0].Text, tc.feeding)
		})
	}
}

func TestWorld_Advance_Sources(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*game.Source)
		dice []int // the 1-in-3 roll for a new Secret: 0 gains one
		want func(*game.Source)
		news string
	}{
		// Ensure a source gains a Secret on a roll of 0 out of SourceSecretChance.
		{name: "GainsSecret", dice: []int{0}, want: func(s *game.Source) { s.Secrets = 3 }},
		{name: "NoSecret", dice: []int{1}},
		{name: "FullRollsNothing", edit: func(s *game.Source) { s.Secrets = game.MaxSourceSecrets }},
		// Ensure the price drifts 1/PriceDrift of the way (at least $1) back to the base, and heat cools.
		{name: "PriceDrifts", edit: func(s *game.Source) { s.Price, s.Heat = 300+2*game.PriceDrift, 25 }, dice: []int{1},
			want: func(s *game.Source) { s.Price, s.Heat = 300+2*game.PriceDrift-2, 15 }},
		{name: "PriceDriftsUp", edit: func(s *game.Source) { s.Price = 300 - 3*game.PriceDrift }, dice: []int{1},
			want: func(s *game.Source) { s.Price = 300 - 3*game.PriceDrift + 3 }},
		{name: "PriceDriftsAtLeastOne", edit: func(s *game.Source) { s.Price = 305 }, dice: []int{1},
			want: func(s *game.Source) { s.Price = 304 }},
		{name: "HeatNeverNegative", edit: func(s *game.Source) { s.Heat = 5 }, dice: []int{1},
			want: func(s *game.Source) { s.Heat = 0 }},
		// Ensure a burned source rolls nothing, then comes back with news.
		{name: "BurnedRollsNothing", edit: func(s *game.Source) { s.BurnedUntil = 22 }},
		{name: "BackFromBurn", edit: func(s *game.Source) { s.BurnedUntil = 21 }, dice: []int{0},
			want: func(s *game.Source) { s.Secrets = 3 }, news: "Deep Throat is talking again."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := throat()
			apply(tc.edit, &src)
			want := src
			apply(tc.want, &want)
			w := world()
			w.Sources = []game.Source{src}
			dice := &Dice{tb: t, values: tc.dice}
			notes := w.Advance(dice)
			assert.Empty(t, dice.values, "scripted rolls left unused")
			assert.Equal(t, want, w.Sources[0])
			if tc.news == "" {
				assert.Empty(t, notes)
				return
			}
			assert.Equal(t, []game.Note{{Tick: 21, Text: tc.news}}, notes)
		})
	}
}

// Ensure the round ends after RoundTicks: ranking to the news, stats and
// sources back to the start, and every player protected as a newcomer
// from the new round's start: a theft's alert carried over would give its
// victim a head start.
func TestWorld_Advance_RoundEnd(t *testing.T) {
	a, b := alice(), bob()
	a.Secrets, a.Cash, a.AP, a.ProtectedUntil = 4, 1000, 3, 150
	src := throat()
	src.Secrets, src.Price, src.Heat, src.BurnedUntil = 0, 400, 50, 120
	w := world(a, b)
	w.Sources = []game.Source{src}
	w.Clock.Tick, w.Clock.RoundStart, w.Clock.RoundTicks = 109, 10, 100

	notes := w.Advance(&Dice{tb: t}) // burned: no roll
	assert.Equal(t, game.Clock{Tick: 110, Round: 2, RoundStart: 110, RoundTicks: 100}, w.Clock)
	// Tick 110 is no payday: the cash is as it was. Each player is told
	// their place on their wire, as an alert: the round's end is not silent.
	begins := "Round 2 begins: %s again with $300, 2 agents and security 1."
	assert.Equal(t, []game.Note{
		{Tick: 110, Text: "Round 1 is over. 1. alice (FBI) with 4 Secrets and $1000. 2. bob (MIB) with 1 Secret and $300." +
			" The FBI wins the round."},
		{Tick: 110, PlayerID: 1, Alert: true, Text: "Round 1 is over: you placed 1st of 2, with 4 Secrets and $1000." +
			" You won the round. The FBI, your side, wins it. " + fmt.Sprintf(begins, "you start")},
		{Tick: 110, PlayerID: 2, Alert: true, Text: "Round 1 is over: you placed 2nd of 2, with 1 Secret and $300." +
			" The FBI wins it. " + fmt.Sprintf(begins, "you start")},
		{Tick: 110, Text: fmt.Sprintf(begins, "everyone starts")},
	}, notes)
	want := game.NewPlayer("alice", game.FBI, 0)
	want.ID, want.ProtectedUntil = 1, 110+game.NewPlayerProtection
	// The career outlasts the round: alice won it, bob took silver.
	want.Career = game.Career{Rounds: 1, Wins: 1, BestPlace: 1, Gold: 1}
	assert.Equal(t, want, w.Players[0])
	assert.Equal(t, 0, w.Players[1].Secrets)
	assert.Equal(t, int64(110+game.NewPlayerProtection), w.Players[1].ProtectedUntil)
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 2, Silver: 1}, w.Players[1].Career)
	assert.Equal(t, 1, w.Players[1].Career.Medals())
	assert.Equal(t, game.Source{ID: 1, Name: "Deep Throat", Secrets: game.SourceStartSecrets, Price: 300, BasePrice: 300},
		w.Sources[0])
}

// Ensure the round does not end a tick early.
func TestWorld_Advance_RoundGoesOn(t *testing.T) {
	a := alice()
	a.Cash = game.AuctionMinBid - 1 // tick 99 is the round's last auction, which would bid the cash (lastCall)
	w := world(a)
	w.Clock.Tick, w.Clock.RoundStart = 98, 0
	assert.Empty(t, w.Advance(&Dice{tb: t}))
	assert.Equal(t, 1, w.Clock.Round)
}

// Ensure FastForward ends the round with a note and restarts it at the new tick.
func TestWorld_FastForward(t *testing.T) {
	a := alice()
	a.Secrets = 2
	w := world(a)
	notes := w.FastForward(250)
	assert.Equal(t, game.Clock{Tick: 270, Round: 2, RoundStart: 270, RoundTicks: 100}, w.Clock)
	require.Len(t, notes, 4)
	assert.Equal(t, game.Note{Tick: 270, PlayerID: a.ID, Alert: true, Text: "Round 1 is over: you placed 1st of 1, with 2 Secrets and $300." +
		" You won the round. The FBI, your side, wins it. Round 2 begins: you start again with $300, 2 agents and security 1."}, notes[2])
	assert.Equal(t, "The wires were cut for 250 ticks; round 1 ends early and the game resumes at tick 270.", notes[0].Text)
	assert.Contains(t, notes[1].Text, "Round 1 is over. 1. alice (FBI) with 2 Secrets")
	assert.Equal(t, 0, w.Players[0].Secrets)
}

func TestRank(t *testing.T) {
	p := func(name string, f game.Faction, secrets, cash int) game.Player {
		return game.Player{Name: name, Faction: f, Secrets: secrets, Cash: cash}
	}
	players := []game.Player{p("carol", game.MIB, 1, 500), p("Bob", game.FBI, 1, 500), p("alice", game.FBI, 1, 500),
		p("dave", game.MIB, 3, 0), p("eve", game.FBI, 1, 900)}
	r := game.Rank(players)
	var names []string
	for _, q := range r.Players {
		names = append(names, q.Name)
	}
	// Ensure Secrets first, then names regardless of case: cash is private
	// (eve's $900 does not put her first among the level players).
	assert.Equal(t, []string{"dave", "alice", "Bob", "carol", "eve"}, names)
	assert.Equal(t, "carol", players[0].Name, "the input is not reordered")
	assert.Equal(t, []game.FactionTotal{{game.FBI, 3, 3}, {game.MIB, 2, 4}}, r.Factions)
	assert.Equal(t, [3]float64{1, 2, 0}, [3]float64{r.Factions[0].Score(), r.Factions[1].Score(), game.FactionTotal{}.Score()})
	f, ok := r.Winner()
	assert.True(t, ok)
	assert.Equal(t, game.MIB, f)
}

func TestRanking_Winner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fbi, mib game.FactionTotal
		want     game.Faction
	}{
		{name: "MoreSecrets", fbi: game.FactionTotal{Secrets: 2}, mib: game.FactionTotal{Secrets: 1}, want: game.FBI},
		// Cash is private (a dossier's): level Secrets are a draw.
		{name: "Draw", fbi: game.FactionTotal{Secrets: 2}, mib: game.FactionTotal{Secrets: 2}},
		// The score is per player: a bigger side does not win by numbers alone.
		{name: "PerPlayerBeatsSum", fbi: game.FactionTotal{Players: 3, Secrets: 9}, mib: game.FactionTotal{Players: 2, Secrets: 7},
			want: game.MIB},
		{name: "PerPlayerSmallSideLoses", fbi: game.FactionTotal{Players: 1, Secrets: 2}, mib: game.FactionTotal{Players: 4, Secrets: 12},
			want: game.MIB},
		{name: "PerPlayerDraw", fbi: game.FactionTotal{Players: 2, Secrets: 6},
			mib: game.FactionTotal{Players: 4, Secrets: 12}},
		{name: "EmptySideScoresZero", fbi: game.FactionTotal{Players: 1, Secrets: 1}, want: game.FBI},
		{name: "EmptyAndBroke", fbi: game.FactionTotal{Players: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fbi.Faction, tc.mib.Faction = game.FBI, game.MIB
			f, ok := (&game.Ranking{Factions: []game.FactionTotal{tc.fbi, tc.mib}}).Winner()
			assert.Equal(t, tc.want, f)
			assert.Equal(t, tc.want != "", ok)
		})
	}
}

// Ensure each player hears their place, whether they won the round, and
// how their side did: level first places win nobody the round.
func TestYourPlace(t *testing.T) {
	p := func(id int64, name string, f game.Faction, secrets, cash int) game.Player {
		return game.Player{ID: id, Name: name, Faction: f, Secrets: secrets, Cash: cash}
	}
	level := game.Rank([]game.Player{p(1, "alice", game.FBI, 2, 100), p(2, "bob", game.MIB, 2, 100), p(3, "carol", game.MIB, 0, 900)})
	assert.Equal(t, "Round 4 is over: you placed joint 1st of 3, with 2 Secrets and $100. The FBI, your side, wins it.",
		game.YourPlace(4, 0, level), "level with bob: alice did not win the round")
	assert.Equal(t, "Round 4 is over: you placed joint 1st of 3, with 2 Secrets and $100. The FBI wins it.",
		game.YourPlace(4, 1, level), "nor did bob, placed by his name no lower")
	assert.Equal(t, "Round 4 is over: you placed 3rd of 3, with 0 Secrets and $900. The FBI wins it.", game.YourPlace(4, 2, level))
	draw := game.Rank([]game.Player{p(1, "alice", game.FBI, 0, 300), p(2, "bob", game.MIB, 0, 300)})
	assert.Equal(t, "Round 1 is over: you placed joint 1st of 2, with 0 Secrets and $300. Neither side wins it.", game.YourPlace(1, 1, draw))
	champion := game.Rank([]game.Player{p(1, "alice", game.FBI, 3, 0), p(2, "dave", game.FBI, 0, 0),
		p(3, "bob", game.MIB, 2, 0), p(4, "carol", game.MIB, 2, 0)})
	assert.Equal(t, "Round 2 is over: you placed 1st of 4, with 3 Secrets and $0. You won the round. The MIB wins it.",
		game.YourPlace(2, 0, champion), "alice won, her side did not (Secrets per player)")
}

func TestOrdinal(t *testing.T) {
	var got []string
	for _, n := range []int{1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 101, 111, 112, 113, 121} {
		got = append(got, game.Ordinal(n))
	}
	assert.Equal(t, []string{"1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "14th", "20th", "21st", "22nd", "23rd",
		"101st", "111th", "112th", "113th", "121st"}, got)
}

// Ensure the summary of an empty round says nobody won.
func TestRoundSummary_Empty(t *testing.T) {
	assert.Equal(t, "Round 7 is over. Neither faction wins the round.", game.RoundSummary(7, game.Rank(nil)))
}

// Ensure players level on Secrets share a place at a round's end, whatever
// their names: a round ended 19, 19, 18 gave zed and amy joint first
// place, a gold medal each and a line each in the hall, and carol third
// (it went to the earlier name). Nobody wins a round whose first are level.
func TestWorld_Advance_RoundEndTies(t *testing.T) {
	p := func(id int64, name string, f game.Faction, secrets int) game.Player {
		q := game.NewPlayer(name, f, 0)
		q.ID, q.Secrets = id, secrets
		return q
	}
	w := world(p(1, "zed", game.FBI, 19), p(2, "amy", game.MIB, 19), p(3, "carol", game.FBI, 18), p(4, "bea", game.MIB, 0))
	w.Clock.Tick, w.Clock.RoundStart, w.Clock.RoundTicks = 99, 0, 100
	notes := w.Advance(&Dice{tb: t}) // no sources: no roll
	require.GreaterOrEqual(t, len(notes), 5)
	assert.Equal(t, "Round 1 is over. 1. zed (FBI) with 19 Secrets and $300. 1. amy (MIB) with 19 Secrets and $300."+
		" 3. carol (FBI) with 18 Secrets and $300. The FBI wins the round.", notes[0].Text)
	places := map[int64]string{}
	for _, n := range notes[1:5] {
		places[n.PlayerID] = n.Text[:strings.Index(n.Text, ",")]
	}
	assert.Equal(t, map[int64]string{1: "Round 1 is over: you placed joint 1st of 4", 2: "Round 1 is over: you placed joint 1st of 4",
		3: "Round 1 is over: you placed 3rd of 4", 4: "Round 1 is over: you placed 4th of 4"}, places)
	assert.NotContains(t, notes[1].Text+notes[2].Text, "You won the round", "level first places win nobody the round")
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 1, Gold: 1}, w.Players[0].Career)
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 1, Gold: 1}, w.Players[1].Career)
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 3, Bronze: 1}, w.Players[2].Career)
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 4}, w.Players[3].Career)
	require.Len(t, w.Ended, 1)
	var top []string
	for _, pl := range w.Ended[0].Top {
		top = append(top, fmt.Sprint(pl.Place, " ", pl.Name))
	}
	assert.Equal(t, []string{"1 zed", "1 amy", "3 carol", "4 bea"}, top, "by place, level players in the order they enlisted")
}

func TestSharedPlaces(t *testing.T) {
	p := func(secrets int) game.Player { return game.Player{Secrets: secrets} }
	assert.Equal(t, []int{1, 1, 3, 4, 4, 4, 7}, game.SharedPlaces(1, []game.Player{p(9), p(9), p(5), p(2), p(2), p(2), p(0)}))
	assert.Equal(t, []int{51, 51, 53}, game.SharedPlaces(51, []game.Player{p(2), p(2), p(1)}), "a later page")
	assert.Empty(t, game.SharedPlaces(1, nil))
}

// Ensure a level top is decided by the round's last auction: amy, a
// Secret behind zed, buys one at the last call and ends level with him;
// she places first and wins the round, he places second. Cash (zed has
// none, amy spent hers) decides nothing.
func TestWorld_Advance_RoundEndLastLot(t *testing.T) {
	p := func(id int64, name string, f game.Faction, secrets, cash int) game.Player {
		q := game.NewPlayer(name, f, 0)
		q.ID, q.Secrets, q.Cash = id, secrets, cash
		return q
	}
	w := world(p(1, "zed", game.FBI, 19, 0), p(2, "amy", game.MIB, 18, 1000), p(3, "carol", game.FBI, 2, 0))
	// A week's round (the grand auction is mid-week, not the last) and
	// no payday in ticks 1009 to 1011.
	w.Clock.Tick, w.Clock.RoundStart, w.Clock.RoundTicks = 1008, 3, 1008
	w.Advance(&Dice{tb: t}) // tick 1009; no sources: no roll
	w.Advance(&Dice{tb: t}) // tick 1010: the round's last auction bids amy's cash
	require.Equal(t, 19, w.Players[1].Secrets)
	assert.True(t, w.Players[1].LastLot)
	assert.False(t, w.Players[0].LastLot)
	rk := game.Rank(w.Players)
	assert.Equal(t, []int{1, 2, 3}, rk.Places)
	notes := w.Advance(&Dice{tb: t}) // tick 1011 ends the round
	assert.Contains(t, notes[0].Text, "Round 1 is over. 1. amy (MIB) with 19 Secrets and $0. 2. zed (FBI) with 19 Secrets and $0.")
	mine := map[int64]string{}
	for _, n := range notes {
		if n.PlayerID != 0 {
			mine[n.PlayerID] = n.Text
		}
	}
	assert.Contains(t, mine[2], "you placed 1st of 3, with 19 Secrets and $0. You won the round. Others were level on Secrets;"+
		" you bought one at the last auction.")
	assert.Contains(t, mine[1], "you placed 2nd of 3, with 19 Secrets and $0. Level on Secrets with a player who bought one"+
		" at the last auction, you place behind them.")
	assert.NotContains(t, mine[3], "Level on Secrets")
	champ, ok := w.Ended[0].Champion()
	assert.True(t, ok)
	assert.Equal(t, "amy", champ.Name)
	assert.Equal(t, game.Career{Rounds: 1, Wins: 1, BestPlace: 1, Gold: 1}, w.Players[1].Career)
	assert.Equal(t, game.Career{Rounds: 1, BestPlace: 2, Silver: 1}, w.Players[0].Career)
	assert.False(t, w.Players[1].LastLot, "a new round clears it")
}

// Ensure a Secret bought at the last auction orders players level on
// Secrets, at every place, and two buyers level on Secrets still share.
func TestRank_LastLot(t *testing.T) {
	p := func(name string, secrets int, lot bool) game.Player {
		return game.Player{Name: name, Faction: game.FBI, Secrets: secrets, LastLot: lot}
	}
	r := game.Rank([]game.Player{p("alice", 5, false), p("bob", 5, true), p("carol", 3, true), p("dave", 3, true),
		p("eve", 3, false), p("fay", 1, false)})
	var names []string
	for _, q := range r.Players {
		names = append(names, q.Name)
	}
	assert.Equal(t, []string{"bob", "alice", "carol", "dave", "eve", "fay"}, names)
	assert.Equal(t, []int{1, 2, 3, 3, 5, 6}, r.Places)
	res := game.RoundResult{Top: []game.Placing{{Place: r.Places[0], Name: "bob", Secrets: 5}, {Place: r.Places[1], Name: "alice", Secrets: 5}}}
	champ, ok := res.Champion()
	assert.True(t, ok)
	assert.Equal(t, "bob", champ.Name)
}
