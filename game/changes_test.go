package game_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kinds returns each change's kind and, for feed lines, whose.
func kinds(changes []game.Change) []string {
	var out []string
	for _, c := range changes {
		if c.PlayerID != 0 {
			out = append(out, fmt.Sprintf("%s:%d", c.Kind, c.PlayerID))
		} else {
			out = append(out, string(c.Kind))
		}
	}
	return out
}

func TestStore_ChangesSince(t *testing.T) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		// Ensure each write logs its changes in its own transaction, in order,
		// with increasing ids and the payload each kind carries.
		s := MustOpenStore(t)
		alice := MustRegister(t, s, "alice", game.FBI)
		start, err := s.LastChange(ctx)
		require.NoError(t, err)
		bob := MustRegister(t, s, "bob", game.MIB)
		_, err = s.Act(ctx, bob.ID, game.Action{Kind: game.PostMessage, Body: "hello, world"})
		require.NoError(t, err)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
		s.Time.Add(Interval)
		_, err = s.Tick(ctx)
		require.NoError(t, err)

		changes, missed, err := s.ChangesSince(ctx, start, 100)
		require.NoError(t, err)
		assert.False(t, missed)
		require.NotEmpty(t, changes)
		got := kinds(changes)
		assert.Equal(t, []string{"news", "feed:2", "player"}, got[:3], "bob's registration: the news, his welcome, his row in the ranking")
		assert.Equal(t, "bob joined the MIB.", changes[0].Event.Text)
		assert.Equal(t, bob.ID, changes[2].Player.ID)
		assert.Equal(t, "post", got[3], "a post changes no standing")
		assert.Equal(t, "hello, world", changes[3].Post.Body)
		assert.Equal(t, "bob", changes[3].Post.Author)
		assert.Contains(t, got[4:], "source", "a haggle changes the source")
		assert.Contains(t, got[4:], "feed:1", "the haggle's outcome in alice's feed")
		assert.Contains(t, got[4:], "player", "and alice's standing: a Secret more, less cash")
		last := changes[len(changes)-1]
		assert.Equal(t, game.ChangeTick, last.Kind, "the tick's change comes after its notes and sources")
		assert.Equal(t, int64(1), last.Clock.Tick)
		for i := 1; i < len(changes); i++ {
			assert.Greater(t, changes[i].ID, changes[i-1].ID)
		}
		lastID, err := s.LastChange(ctx)
		require.NoError(t, err)
		assert.Equal(t, last.ID, lastID)

		rest, missed, err := s.ChangesSince(ctx, lastID, 100)
		require.NoError(t, err)
		assert.False(t, missed)
		assert.Empty(t, rest)
		some, _, err := s.ChangesSince(ctx, start, 2)
		require.NoError(t, err)
		assert.Equal(t, changes[:2], some, "limit")
	})
	t.Run("Alert", func(t *testing.T) {
		// Ensure a feed line about another player's action is an alert, and
		// the actor's own line is not.
		s := MustOpenStore(t)
		alice := MustRegister(t, s, "alice", game.FBI)
		bob := MustRegister(t, s, "bob", game.MIB)
		start, err := s.LastChange(ctx)
		require.NoError(t, err)
		_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Spy, TargetID: bob.ID})
		require.NoError(t, err)
		changes, _, err := s.ChangesSince(ctx, start, 10)
		require.NoError(t, err)
		alerts := map[int64]bool{}
		for _, c := range changes {
			if c.Kind == game.ChangeFeed {
				alerts[c.PlayerID] = c.Alert
			} else {
				assert.False(t, c.Alert, "only feed lines alert")
			}
		}
		assert.Equal(t, map[int64]bool{alice.ID: false, bob.ID: true}, alerts)
	})
	t.Run("Standing", func(t *testing.T) {
		// Ensure a change of what the ranking shows of a player (Secrets,
		// protection) logs a player change carrying their row as it is, for
		// the actor and the target of an action; AP alone (a spy's cost)
		// logs none, nor does cash alone (private: a dossier's), nor a
		// tick's pay for everyone (the tick's own change tells the pages to
		// reload their standings).
		s := MustOpenStore(t)
		alice := MustRegister(t, s, "alice", game.FBI)
		bob := MustRegister(t, s, "bob", game.MIB)
		standings := func(after int64) map[int64]game.Player {
			t.Helper()
			changes, _, err := s.ChangesSince(ctx, after, 100)
			require.NoError(t, err)
			got := map[int64]game.Player{}
			for _, c := range changes {
				if c.Kind == game.ChangePlayer {
					assert.Zero(t, c.PlayerID, "everyone's")
					got[c.Player.ID] = *c.Player
				}
			}
			return got
		}
		start, err := s.LastChange(ctx)
		require.NoError(t, err)
		_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Spy, TargetID: bob.ID})
		require.NoError(t, err)
		assert.Empty(t, standings(start), "spying costs AP only")

		start, err = s.LastChange(ctx)
		require.NoError(t, err)
		_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Recruit})
		require.NoError(t, err)
		assert.Empty(t, standings(start), "recruiting costs cash, which nobody else sees")

		start, err = s.LastChange(ctx)
		require.NoError(t, err)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
		assert.Equal(t, map[int64]game.Player{alice.ID: *MustPlayer(t, s, alice.ID)}, standings(start))

		start, err = s.LastChange(ctx)
		require.NoError(t, err)
		s.Time.Add(game.PayTicks * Interval) // a payday
		_, err = s.Tick(ctx)
		require.NoError(t, err)
		require.NotEqual(t, game.StartCash, MustPlayer(t, s, bob.ID).Cash, "bob was paid")
		assert.Empty(t, standings(start), "a message per player to every stream at every payday")
	})
	t.Run("RefusedWritesNothing", func(t *testing.T) {
		// Ensure a refused action logs no change.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "carol", game.FBI)
		before, err := s.LastChange(ctx)
		require.NoError(t, err)
		_, err = s.Act(ctx, p.ID, game.Action{Kind: game.PostMessage, Body: "   "})
		require.Error(t, err)
		after, err := s.LastChange(ctx)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	})
	t.Run("Missed", func(t *testing.T) {
		// Ensure a cursor older than the oldest kept change reports missed,
		// and a pruned feed line's change is skipped.
		const keep = 100
		s := MustOpenStore(t, func(o *game.Options) { o.KeepChanges = keep })
		p := MustRegister(t, s, "dana", game.FBI)
		notes := make([]game.Note, keep+10)
		for i := range notes {
			notes[i] = game.Note{PlayerID: p.ID, Text: "filler"}
		}
		require.NoError(t, s.AddNotes(ctx, notes))
		s.Time.Add(Interval)
		_, err := s.Tick(ctx) // prunes changes past KeepChanges and feed lines past KeepFeed
		require.NoError(t, err)
		changes, missed, err := s.ChangesSince(ctx, 1, keep+100)
		require.NoError(t, err)
		assert.True(t, missed)
		feed, gone := 0, 0
		for _, c := range changes {
			switch {
			case c.Gone:
				gone++
				assert.NotZero(t, c.Event.ID, "a gone change keeps its row's id")
			case c.Kind == game.ChangeFeed:
				feed++
			}
		}
		assert.Equal(t, min(game.KeepFeed, keep), feed, "only the feed lines still kept, of the changes kept")
		assert.Positive(t, gone, "the pruned lines' changes come back Gone, for the cursor")
		last, err := s.LastChange(ctx)
		require.NoError(t, err)
		_, missed, err = s.ChangesSince(ctx, last, 10)
		require.NoError(t, err)
		assert.False(t, missed)
	})
}
