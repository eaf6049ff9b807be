package game_test

import (
	"context"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Visit(t *testing.T) {
	// Ensure the first visit has no digest, a visit within the same tick
	// none either, and one after ticks passed tells what happened since.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	clock := func() game.Clock {
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		return c
	}
	d, err := s.Visit(ctx, MustPlayer(t, s, a.ID), clock())
	require.NoError(t, err)
	assert.Nil(t, d, "the first visit")
	s.Time.Add(2 * Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	_, err = s.Act(ctx, b.ID, game.Action{Kind: game.Spy, TargetID: a.ID})
	require.NoError(t, err)
	_, err = s.Act(ctx, b.ID, game.Action{Kind: game.Message, To: "alice", Body: "Hi."})
	require.NoError(t, err)
	_, err = s.Act(ctx, b.ID, game.Action{Kind: game.PostMessage, Body: "MIB only", FactionOnly: true})
	require.NoError(t, err)
	d, err = s.Visit(ctx, MustPlayer(t, s, a.ID), clock())
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, [2]int64{0, 2}, [2]int64{d.Since, d.Ticks})
	require.Len(t, d.Lines, 2, "%q", Texts(d.Lines))
	assert.Contains(t, d.Lines[0].Text, "A private message from bob")
	assert.Equal(t, 0, d.More)
	assert.Equal(t, 1, d.News, "the spy's news line")
	assert.Equal(t, 0, d.Posts, "the other side's channel is not for alice")
	assert.Equal(t, 1, d.Unread)
	d, err = s.Visit(ctx, MustPlayer(t, s, a.ID), clock())
	require.NoError(t, err)
	assert.Nil(t, d, "again within the tick")
}

func TestStore_Visit_Version(t *testing.T) {
	// Ensure recording a visit leaves the version (and so the read cache)
	// alone, and that the record holds: the next visit's digest starts at it.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	c, err := s.Clock(ctx)
	require.NoError(t, err)
	v := s.Version()
	_, err = s.Visit(ctx, MustPlayer(t, s, a.ID), c)
	require.NoError(t, err)
	assert.Equal(t, v, s.Version(), "the first visit")
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	c, err = s.Clock(ctx)
	require.NoError(t, err)
	v = s.Version()
	d, err := s.Visit(ctx, MustPlayer(t, s, a.ID), c)
	require.NoError(t, err)
	require.NotNil(t, d)
	assert.Equal(t, c.Tick-1, d.Since)
	assert.Equal(t, v, s.Version(), "a visit a tick later")
}
