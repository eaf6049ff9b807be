package game_test

import (
	"context"
	"strings"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Messages(t *testing.T) {
	// Ensure a private message reaches its recipient's inbox, unread, with
	// an alert on their wire, and reading the thread marks it read.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	c := MustRegister(t, s, "carol", game.FBI)
	for _, body := range []string{"Meet at the fountain.", "Bring the file."} {
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Message, To: "BOB", Body: "  " + body + " "})
		require.NoError(t, err)
		assert.Equal(t, "Your message to bob is on its way.", out.Text)
	}
	_, err := s.Act(ctx, c.ID, game.Action{Kind: game.Message, To: "bob", Body: "Hello from carol."})
	require.NoError(t, err)
	assert.Equal(t, 3, MustPlayer(t, s, b.ID).UnreadMessages)
	assert.Equal(t, 0, MustPlayer(t, s, a.ID).UnreadMessages)

	inbox, err := s.Inbox(ctx, b.ID)
	require.NoError(t, err)
	require.Len(t, inbox, 2)
	assert.Equal(t, "carol", inbox[0].With.Name, "the latest conversation first")
	assert.Equal(t, [2]int{1, 1}, [2]int{inbox[0].Unread, inbox[0].Written})
	assert.Equal(t, [2]int{2, 2}, [2]int{inbox[1].Unread, inbox[1].Written})
	assert.Equal(t, "Bring the file.", inbox[1].Last.Body)

	feed, err := s.Events(ctx, b.ID, 10)
	require.NoError(t, err)
	assert.Contains(t, feed[0].Text, "A private message from carol (FBI): Hello from carol.")

	with, msgs, err := s.Thread(ctx, b.ID, "alice")
	require.NoError(t, err)
	assert.Equal(t, a.ID, with.ID)
	require.Len(t, msgs, 2)
	assert.Equal(t, [3]string{"alice", "bob", "Meet at the fountain."}, [3]string{msgs[0].From, msgs[0].To, msgs[0].Body})
	assert.Equal(t, 1, MustPlayer(t, s, b.ID).UnreadMessages, "carol's is still unread")
	_, msgs, err = s.Thread(ctx, a.ID, "bob")
	require.NoError(t, err)
	assert.True(t, msgs[0].Read, "the sender sees it read")

	for _, tc := range []struct {
		a    game.Action
		code string
		msg  string
	}{
		{game.Action{Kind: game.Message, To: "alice", Body: "hi"}, game.EINVALID, "You cannot send a message to yourself."},
		{game.Action{Kind: game.Message, To: "bob", Body: "   "}, game.EINVALID, "Your message is empty."},
		{game.Action{Kind: game.Message, To: "bob", Body: strings.Repeat("x", game.MaxPostRunes+1)}, game.EINVALID, "at most 500 characters"},
		{game.Action{Kind: game.Message, To: "nobody", Body: "hi"}, game.ENOTFOUND, `There is no agent called "nobody" to write to.`},
	} {
		_, err := s.Act(ctx, a.ID, tc.a)
		RequireCode(t, err, tc.code, tc.msg)
	}
	_, _, err = s.Thread(ctx, a.ID, "nobody")
	RequireCode(t, err, game.ENOTFOUND, "nobody")
}

func TestStore_FactionUnread(t *testing.T) {
	// Ensure a post on the faction channel counts unread for the author's
	// teammates only, until they open the board.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	c := MustRegister(t, s, "carol", game.FBI)
	_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "FBI only", FactionOnly: true})
	require.NoError(t, err)
	_, err = s.Act(ctx, b.ID, game.Action{Kind: game.PostMessage, Body: "for everyone"})
	require.NoError(t, err)
	assert.Equal(t, [3]int{0, 0, 1}, [3]int{MustPlayer(t, s, a.ID).UnreadFaction, MustPlayer(t, s, b.ID).UnreadFaction,
		MustPlayer(t, s, c.ID).UnreadFaction})
	require.NoError(t, s.SeenFaction(ctx, MustPlayer(t, s, c.ID)))
	assert.Equal(t, 0, MustPlayer(t, s, c.ID).UnreadFaction)
}
