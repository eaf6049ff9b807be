package game_test

import (
	"context"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve_Report(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    game.ActionKind
		dice    []int // d6 - 1: the actor's, then the target's
		success bool
		summary string
	}{
		{"SpyWin", game.Spy, []int{5, 0}, true,
			"The roll: 8 (your 2 agents + a 6) against 2 (security 1 + a 1): you won it. The odds were 58%."},
		{"SpyTie", game.Spy, []int{0, 1}, false,
			"The roll: 3 (your 2 agents + a 1) against 3 (security 1 + a 2): a tie, which goes to the target. The odds were 58%."},
		{"StealLoss", game.Steal, []int{0, 4}, false,
			"The roll: 3 (your 2 agents + a 1) against 6 (security 1 + a 5): the target won it. The odds were 58%."},
		{"StealWin", game.Steal, []int{3, 3}, true, "The roll: 6 (your 2 agents + a 4) against 5 (security 1 + a 4): you won it."},
	} {
		cased := true
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a spy or steal order reports both sides, the odds and
			// the dice, and its outcome ends with the report's summary.
			actor, target := alice(), bob()
			actor.Security = 3
			target.Agents = 4
			turn := &game.Turn{Tick: 20, Actor: &actor, Target: &target, Rand: &Dice{tb: t, values: tc.dice}, Cased: cased}
			res, err := game.Resolve(turn, game.Action{Kind: tc.kind, TargetID: target.ID})
			require.NoError(t, err)
			r := res.Report
			require.NotNil(t, r)
			assert.Equal(t, tc.kind, r.Kind)
			assert.Equal(t, [4]int{2, 3, 4, 1}, [4]int{r.Actor.Agents, r.Actor.Security, r.Target.Agents, r.Target.Security})
			assert.Equal(t, [2]string{"alice", "bob"}, [2]string{r.Actor.Name, r.Target.Name})
			assert.Equal(t, [2]int{tc.dice[0] + 1, tc.dice[1] + 1}, [2]int{r.AttackRoll, r.DefenceRoll})
			assert.InDelta(t, game.SpyOdds(2, 1), r.Odds, 1e-9)
			assert.Equal(t, tc.success, r.Success)
			assert.Contains(t, r.Summary(), tc.summary)
			assert.Contains(t, res.Outcome.Text, r.Summary())
			assert.Equal(t, res.Outcome.Text, res.Notes[0].Text, "the feed line is the outcome")
		})
	}
}

func TestStore_Reports(t *testing.T) {
	// Ensure spy orders keep their reports for both sides, newest first,
	// and the target of an order that went unseen does not learn who gave it.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	for range 8 {
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Spy, TargetID: b.ID})
		require.NoError(t, err)
	}
	mine, err := s.Reports(ctx, a.ID, 100)
	require.NoError(t, err)
	require.Len(t, mine, 8)
	assert.Greater(t, mine[0].ID, mine[7].ID, "newest first")
	theirs, err := s.Reports(ctx, b.ID, 100)
	require.NoError(t, err)
	require.Len(t, theirs, 8)
	wins := 0
	for i, r := range mine {
		assert.Equal(t, "alice", r.Actor.Name)
		assert.Equal(t, game.Spy, r.Kind)
		assert.Equal(t, r.ID, theirs[i].ID)
		if r.Success {
			wins++
			assert.Empty(t, theirs[i].Actor.Name, "an unseen spy stays unnamed")
		} else {
			assert.Equal(t, "alice", theirs[i].Actor.Name, "a caught spy is named")
		}
	}
	assert.Positive(t, wins)
	assert.Less(t, wins, 8)
	none, err := s.Reports(ctx, a.ID, 0)
	require.NoError(t, err)
	assert.Empty(t, none)
}
