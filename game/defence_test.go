package game_test

import (
	"fmt"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResolve_Defence plays the defender's moves and what they do to spies
// and thieves.
func TestResolve_Defence(t *testing.T) {
	for _, tc := range defenceCases() {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

func defenceCases() []ruleCase {
	spy, steal := game.Action{Kind: game.Spy}, game.Action{Kind: game.Steal}
	trapped := func(p *game.Player) { p.Trap = true }
	swept := func(p *game.Player) { p.SweepUntil = 30 }
	return []ruleCase{
		// Ensure a trap costs TrapAP and TrapCost, and only one is set at a time.
		{name: "TrapSet", action: game.Action{Kind: game.Trap}, outcome: "You set a trap",
			want: func(a, _ *game.Player, _ *game.Source) {
				a.AP, a.Cash, a.Trap = 10-game.TrapAP, 300-game.TrapCost, true
			}},
		{name: "TrapTwice", actor: trapped, action: game.Action{Kind: game.Trap}, errMsg: "Your trap is set already"},
		{name: "TrapNoCash", actor: func(p *game.Player) { p.Cash = game.TrapCost - 1 }, action: game.Action{Kind: game.Trap},
			errMsg: fmt.Sprintf("setting a trap costs $%d", game.TrapCost)},
		// Ensure a sweep runs SweepTicks from now, or from the end of the one running.
		{name: "SweepStart", action: game.Action{Kind: game.Sweep}, outcome: fmt.Sprintf("until tick %d", 20+game.SweepTicks),
			want: func(a, _ *game.Player, _ *game.Source) {
				a.AP, a.Cash, a.SweepUntil = 10-game.SweepAP, 300-game.SweepCost, 20+game.SweepTicks
			}},
		{name: "SweepExtends", actor: swept, action: game.Action{Kind: game.Sweep}, outcome: fmt.Sprintf("until tick %d", 30+game.SweepTicks),
			want: func(a, _ *game.Player, _ *game.Source) {
				a.AP, a.Cash, a.SweepUntil = 10-game.SweepAP, 300-game.SweepCost, 30+game.SweepTicks
			}},
		// A blind thief springs the trap: TrapDefence more, TrapCatch more
		// agents caught, and the trap is gone. 2 agents + 6 against security
		// 1 + 3 blind + 3 = 7 wins without the trap, loses with it (9).
		{name: "TrapCatchesBlindThief", blind: true, target: trapped, action: steal, dice: []int{5, 2},
			outcome: "ran into a trap: 2 of your agents were caught", news: "walked into a trap",
			want: func(a, b *game.Player, _ *game.Source) { a.AP, a.Agents, b.Trap = 7, 2-1-game.TrapCatch, false }},
		// A blind thief who beats the trap still steals, and is named.
		{name: "TrapSprungThiefWins", blind: true, actor: func(p *game.Player) { p.Agents = 9 }, target: trapped, action: steal,
			dice: []int{5, 0}, outcome: "sprang bob's trap and still got away", news: "Someone stole",
			want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.Trap, b.ProtectedUntil = 7, 1, 0, false, 20+game.AlertTicks
			}},
		// A thief who cased the place steps around the trap, which stays set.
		{name: "TrapCasedThiefStepsAround", target: trapped, action: steal, dice: []int{5, 0}, outcome: "stole a Secret from bob",
			news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 1, 0, 20+game.AlertTicks
			}},
		// A sweep adds SweepDefence against a spy: 2 + 1 against 1 + 1 + 1 wins
		// without it, ties (and loses) with it.
		{name: "SweepStopsSpy", target: swept, action: spy, dice: []int{0, 0}, outcome: "spotted in bob's office",
			news: "was caught spying", want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		// A spy who beats the sweep gets the file, and the sweep names them.
		{name: "SweepNamesSpy", target: swept, action: spy, dice: []int{5, 0}, outcome: "no trap, a sweep until tick 30, no bid",
			intel: true, news: "Someone went through the files of bob (MIB).", want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		// A sweep over is no sweep.
		{name: "SweepOver", tick: 30, target: swept, action: spy, dice: []int{0, 0}, outcome: "no sweep", intel: true,
			news: "Someone went through", want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
	}
}

// TestResolve_SweepTellsTarget checks the target of a spy who got in learns
// the spy's name only when a sweep ran.
func TestResolve_SweepTellsTarget(t *testing.T) {
	for _, sweeping := range []bool{false, true} {
		actor, target := alice(), bob()
		if sweeping {
			target.SweepUntil = 30
		}
		turn := &game.Turn{Tick: 20, Actor: &actor, Target: &target, Rand: &Dice{tb: t, values: []int{5, 0}}}
		res, err := game.Resolve(turn, game.Action{Kind: game.Spy, TargetID: 2})
		require.NoError(t, err)
		told := res.Notes[1]
		require.Equal(t, target.ID, told.PlayerID)
		if sweeping {
			assert.Equal(t, "Your sweep saw alice (FBI) go through your files.", told.Text)
			assert.True(t, res.Report.Sweep)
		} else {
			assert.Equal(t, "Someone went through your files.", told.Text)
		}
	}
}

// TestOddsOf checks what each defence adds, the security counted
// game.DuoSecurity times against a thief in a game of two, and that the
// odds a dossier shows before an order are the odds the order is rolled
// at when the dossier still holds (the Steal and Spy buttons',
// game.Dossier.Odds), at a table of two and of three.
func TestOddsOf(t *testing.T) {
	target := game.Player{Security: 2, Trap: true, SweepUntil: 50}
	duo := game.DuoSecurity * 2
	for _, tc := range []struct {
		kind    game.ActionKind
		cased   bool
		tick    int64
		players int
		defence int
		why     string
	}{
		{game.Steal, true, 40, 3, 2, "security 2"},
		{game.Steal, false, 40, 3, 2 + game.BlindDefence + game.TrapDefence, fmt.Sprintf("security 2 + %d going in blind + %d for a trap", game.BlindDefence, game.TrapDefence)},
		{game.Spy, false, 40, 3, 2 + game.SweepDefence, fmt.Sprintf("security 2 + %d for a sweep", game.SweepDefence)},
		{game.Spy, false, 50, 3, 2, "security 2"},
		// Ensure head to head a thief faces the security DuoSecurity times,
		// the blind thief's and the trap's additions once; a spy is not.
		{game.Steal, true, 40, game.DuoTable, duo, fmt.Sprintf("security 2 ×%d head to head", game.DuoSecurity)},
		{game.Steal, false, 40, game.DuoTable, duo + game.BlindDefence + game.TrapDefence,
			fmt.Sprintf("security 2 ×%d head to head + %d going in blind + %d for a trap", game.DuoSecurity, game.BlindDefence, game.TrapDefence)},
		{game.Spy, false, 40, game.DuoTable, 2 + game.SweepDefence, fmt.Sprintf("security 2 + %d for a sweep", game.SweepDefence)},
		{game.Spy, false, 50, game.DuoTable, 2, "security 2"},
	} {
		o := game.OddsOf(tc.kind, 4, target, tc.cased, tc.tick, tc.players)
		assert.Equal(t, tc.defence, o.Defence, "%s cased %v at %d players", tc.kind, tc.cased, tc.players)
		assert.Equal(t, tc.why, o.Why())
		assert.Equal(t, game.SpyOdds(4, tc.defence), o.Chance)
	}

	// A dossier of tick 35 at tick 40 cases the place; the order rolls at the
	// odds the page showed (one of tick 20 does not: the thief goes in blind
	// and springs the trap).
	viewer := &game.Player{ID: 1, Name: "alice", Faction: game.FBI, Agents: 4}
	for _, players := range []int{game.DuoTable, 3} {
		for _, tick := range []int64{35, 20} {
			d := game.Dossier{Target: game.Player{ID: 2, Name: "bob", Faction: game.MIB, Security: 2, Trap: true, SweepUntil: 50}, Known: true, Tick: tick}
			for _, kind := range []game.ActionKind{game.Spy, game.Steal} {
				shown := d.Odds(viewer, kind, 40, players)
				actor, real := game.Player{ID: 1, Name: "alice", Faction: game.FBI, Agents: 4, AP: 10}, bob()
				real.Security, real.Trap, real.SweepUntil = 2, true, 50
				turn := &game.Turn{Tick: 40, Actor: &actor, Target: &real, Cased: game.Cased(d.Tick, 40), Players: players,
					Rand: &Dice{tb: t, values: []int{0, 0}}}
				res, err := game.Resolve(turn, game.Action{Kind: kind, TargetID: 2})
				require.NoError(t, err)
				assert.Equal(t, shown.Chance, res.Report.Odds, "%s at %d players, file of tick %d: the odds shown are the odds rolled", kind, players, tick)
				assert.Equal(t, shown.Defence, res.Report.Defence)
				assert.Equal(t, shown.Why(), res.Report.Why())
			}
		}
	}
	// Without a dossier the security is a guess, and a thief goes in blind.
	guess := game.Dossier{Target: game.Player{ID: 2, Faction: game.MIB}}.Odds(viewer, game.Steal, 40, 3)
	assert.True(t, guess.Guess)
	assert.Equal(t, game.StartSecurity+game.BlindDefence, guess.Defence)
	assert.Contains(t, guess.Why(), "(a guess)")
	guess = game.Dossier{Target: game.Player{ID: 2, Faction: game.MIB}}.Odds(viewer, game.Steal, 40, game.DuoTable)
	assert.Equal(t, game.DuoSecurity*game.StartSecurity+game.BlindDefence, guess.Defence)
	assert.Equal(t, fmt.Sprintf("security %d (a guess) ×%d head to head + %d going in blind", game.StartSecurity, game.DuoSecurity, game.BlindDefence), guess.Why())
}
