package game_test

import (
	"context"
	"strings"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve_Batch(t *testing.T) {
	t.Run("Rumors", func(t *testing.T) {
		// Ensure a batch plays each order and reports every outcome, numbered,
		// and writes one line on the wire for all of them, with the sum: a
		// batch of routine orders pushed an alert off HQ's wire.
		actor := alice()
		// A rumor: roll 0..99 (< 4 a Secret, < 30 nothing), then the cash.
		dice := &Dice{tb: t, values: []int{50, 0, 10, 99, 40}}
		res, err := game.Resolve(&game.Turn{Tick: 20, Actor: &actor, Rand: dice}, game.Action{Kind: game.Rumor, Count: 3})
		require.NoError(t, err)
		assert.Empty(t, dice.values)
		assert.Equal(t, 3, res.Outcome.Orders)
		assert.Equal(t, "3 of 3 rumor orders carried out: (1) You sold a juicy rumor to a tabloid for $10."+
			" (2) The rumor led nowhere. (3) You sold a juicy rumor to a tabloid for $50.", res.Outcome.Text)
		assert.Equal(t, 7, actor.AP)
		assert.Equal(t, 360, actor.Cash)
		var feed []string
		for _, n := range res.Notes {
			if n.PlayerID == actor.ID {
				feed = append(feed, n.Text)
			}
		}
		assert.Equal(t, []string{"3 of 3 rumor orders carried out: $60 from tabloids, 1 led nowhere."}, feed)
	})
	t.Run("StopsShort", func(t *testing.T) {
		// Ensure a batch that runs out of cash stops, keeps what it did, and says why.
		actor := alice() // $300: three recruits
		res, err := game.Resolve(&game.Turn{Tick: 20, Actor: &actor}, game.Action{Kind: game.Recruit, Count: 5})
		require.NoError(t, err)
		assert.Equal(t, 3, res.Outcome.Orders)
		assert.Equal(t, 5, actor.Agents)
		assert.Equal(t, 0, actor.Cash)
		assert.True(t, strings.HasSuffix(res.Outcome.Text,
			"Stopped after 3 of 5: Not enough cash: recruiting costs $100, you have $0."), res.Outcome.Text)
		require.Len(t, res.Notes, 1)
		assert.Equal(t, "3 of 5 recruit orders carried out: $300 spent: you now run 5 agents."+
			" Stopped after 3 of 5: Not enough cash: recruiting costs $100, you have $0.", res.Notes[0].Text)
	})
	for _, tc := range []struct {
		name   string
		a      game.Action
		errMsg string
	}{
		{"TooMany", game.Action{Kind: game.Rumor, Count: game.MaxBatch + 1}, "A batch is 1 to 24 orders, not 25."},
		{"Negative", game.Action{Kind: game.Rumor, Count: -1}, "A batch is 1 to 24 orders, not -1."},
		{"NotBatchable", game.Action{Kind: game.Spy, TargetID: 2, Count: 2}, `Only recruiting, fortifying and rumors come in batches, not "spy".`},
		{"FirstRefused", game.Action{Kind: game.Fortify, Count: 2}, "Not enough action points: fortifying needs 1, you have 0."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a bad batch, or one whose first order is refused, changes nothing.
			actor := alice()
			if tc.name == "FirstRefused" {
				actor.AP = 0
			}
			before := actor
			target := bob()
			_, err := game.Resolve(&game.Turn{Tick: 20, Actor: &actor, Target: &target}, tc.a)
			RequireCode(t, err, game.EINVALID, tc.errMsg)
			assert.Equal(t, before, actor)
		})
	}
}

func TestStore_ActBatch(t *testing.T) {
	// Ensure the store writes a whole batch in one go: the stats, and one
	// feed line for the batch.
	ctx := context.Background()
	s := MustOpenStore(t)
	p := MustRegister(t, s, "alice", game.FBI)
	out, err := s.Act(ctx, p.ID, game.Action{Kind: game.Rumor, Count: 4})
	require.NoError(t, err)
	assert.Equal(t, 4, out.Orders)
	got := MustPlayer(t, s, p.ID)
	assert.Equal(t, game.StartAP-4*game.RumorAP, got.AP)
	feed, err := s.Events(ctx, p.ID, 100)
	require.NoError(t, err)
	n := 0
	for _, e := range feed {
		if strings.Contains(e.Text, "rumor") {
			n++
		}
	}
	assert.Equal(t, 1, n, "one feed line for the batch: %q", Texts(feed))
	assert.Contains(t, feed[0].Text, "4 of 4 rumor orders carried out: ")
}
