package game_test

import (
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

func TestWorld_Advance_Players(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*game.Player)
		ap      int
		cash    int
		deserts bool   // one agent fewer
		feeding string // the player's feed line, if any
	}{
		// Ensure AP rise by 2 and cash by 40 + 10 x Secrets - 5 x agents.
		{name: "Start", ap: 12, cash: 330},
		{name: "Secrets", edit: func(p *game.Player) { p.Secrets = 3 }, ap: 12, cash: 360},
		{name: "APCapped", edit: func(p *game.Player) { p.AP = 19 }, ap: 20, cash: 330},
		{name: "APAtCap", edit: func(p *game.Player) { p.AP = 20 }, ap: 20, cash: 330},
		{name: "APAboveCapKept", edit: func(p *game.Player) { p.AP = 25 }, ap: 25, cash: 330},
		{name: "UpkeepEatsCash", edit: func(p *game.Player) { p.Agents, p.Cash = 10, 100 }, ap: 12, cash: 90},
		{name: "UpkeepJustPaid", edit: func(p *game.Player) { p.Agents, p.Cash = 10, 10 }, ap: 12, cash: 0},
		// Ensure cash never goes negative, and unpaid upkeep costs an agent.
		{name: "UpkeepUnpaid", edit: func(p *game.Player) { p.Agents, p.Cash = 20, 10 }, ap: 12, cash: 0,
			deserts: true, feeding: "Unpaid, one of your agents walked out."},
		{name: "ProtectionEnds", edit: func(p *game.Player) { p.ProtectedUntil = 21 }, ap: 12, cash: 330,
			feeding: "Your new-player protection has ended"},
		{name: "ProtectionLasts", edit: func(p *game.Player) { p.ProtectedUntil = 22 }, ap: 12, cash: 330},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := alice()
			apply(tc.edit, &p)
			agents := p.Agents
			if tc.deserts {
				agents--
			}
			w := world(p)
			notes := w.Advance(&Dice{tb: t})
			assert.Equal(t, int64(21), w.Clock.Tick)
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
		// Ensure the price drifts a tenth of the way (at least $1) back to the base, and heat cools.
		{name: "PriceDrifts", edit: func(s *game.Source) { s.Price, s.Heat = 365, 25 }, dice: []int{1},
			want: func(s *game.Source) { s.Price, s.Heat = 359, 15 }},
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
// sources back to the start, protection kept.
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
	require.Len(t, notes, 2)
	assert.Equal(t, "Round 1 is over. 1. alice (FBI) with 4 Secrets and $1070. 2. bob (MIB) with 1 Secrets and $340."+
		" The FBI wins the round.", notes[0].Text)
	assert.Contains(t, notes[1].Text, "Round 2 begins")
	for _, n := range notes {
		assert.Equal(t, game.Note{Tick: 110, Text: n.Text}, n)
	}
	want := game.NewPlayer("alice", game.FBI, 0)
	want.ID, want.ProtectedUntil = 1, 150
	assert.Equal(t, want, w.Players[0])
	assert.Equal(t, 0, w.Players[1].Secrets)
	assert.Equal(t, game.Source{ID: 1, Name: "Deep Throat", Secrets: game.SourceStartSecrets, Price: 300, BasePrice: 300},
		w.Sources[0])
}

// Ensure the round does not end a tick early.
func TestWorld_Advance_RoundGoesOn(t *testing.T) {
	w := world(alice())
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
	require.Len(t, notes, 3)
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
	// Ensure Secrets first, then cash, then names regardless of case.
	assert.Equal(t, []string{"dave", "eve", "alice", "Bob", "carol"}, names)
	assert.Equal(t, "carol", players[0].Name, "the input is not reordered")
	assert.Equal(t, []game.FactionTotal{{game.FBI, 3, 3, 1900}, {game.MIB, 2, 4, 500}}, r.Factions)
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
		{name: "MoreSecrets", fbi: game.FactionTotal{Secrets: 2}, mib: game.FactionTotal{Secrets: 1, Cash: 900}, want: game.FBI},
		{name: "CashBreaksTie", fbi: game.FactionTotal{Secrets: 2}, mib: game.FactionTotal{Secrets: 2, Cash: 1}, want: game.MIB},
		{name: "Draw", fbi: game.FactionTotal{Secrets: 2, Cash: 5}, mib: game.FactionTotal{Secrets: 2, Cash: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.fbi.Faction, tc.mib.Faction = game.FBI, game.MIB
			f, ok := (&game.Ranking{Factions: []game.FactionTotal{tc.fbi, tc.mib}}).Winner()
			assert.Equal(t, tc.want, f)
			assert.Equal(t, tc.want != "", ok)
		})
	}
}

// Ensure the summary of an empty round says nobody won.
func TestRoundSummary_Empty(t *testing.T) {
	assert.Equal(t, "Round 7 is over. Neither faction wins the round.", game.RoundSummary(7, game.Rank(nil)))
}
