package game_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

func TestStore_MessageFlood(t *testing.T) {
	// Ensure one writer cannot erase what others wrote to a player: of 500
	// messages at once only MessageBurst go, each refusal naming the limit;
	// 500 more at the limit's pace, over hours, leave a third player's
	// earlier message to the victim and the victim's last theft alert on
	// their wire after the next tick, where the writer's own oldest
	// messages and alerts go.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10_000 }) // no round ends in the hours the flood takes
	alice := MustRegister(t, s, "alice", game.FBI)
	bob := MustRegister(t, s, "bob", game.MIB) // the victim
	carol := MustRegister(t, s, "carol", game.FBI)
	dave := MustRegister(t, s, "dave", game.MIB)
	require.NoError(t, s.SetSecrets(ctx, bob.ID, 3, game.StartCash))
	s.Time.Add(game.NewPlayerProtection * Interval)
	_, err := s.Tick(ctx)
	require.NoError(t, err)
	_, err = s.Act(ctx, dave.ID, game.Action{Kind: game.Message, To: "bob", Body: "The file is under the bench."})
	require.NoError(t, err)
	require.NoError(t, s.SetSecrets(ctx, alice.ID, 0, 0)) // cash that would buy the gap rules a theft out
	_, err = s.Act(ctx, alice.ID, game.Action{Kind: game.Steal, TargetID: bob.ID})
	require.NoError(t, err)
	wire, err := s.Events(ctx, bob.ID, 1)
	require.NoError(t, err)
	theft := wire[0].Text
	require.Regexp(t, `^(Someone stole one of your Secrets|Your guards caught an agent of alice)`, theft)

	limit := fmt.Sprintf("at most %d messages at once, then one every %d seconds",
		game.MessageBurst, int(game.MessageEvery/time.Second))
	sent := 0
	for i := range 500 {
		_, err := s.Act(ctx, carol.ID, game.Action{Kind: game.Message, To: "bob", Body: fmt.Sprint("spam ", i)})
		if err == nil {
			sent++
			continue
		}
		RequireCode(t, err, game.EINVALID, limit)
	}
	assert.Equal(t, game.MessageBurst, sent, "the burst, then refusals")
	for i := range 500 { // at the limit's pace: 500 more over four hours
		s.Time.Add(game.MessageEvery)
		_, err := s.Act(ctx, carol.ID, game.Action{Kind: game.Message, To: "bob", Body: fmt.Sprint("patient spam ", i)})
		require.NoError(t, err, "message %d", i)
	}
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)

	_, msgs, err := s.Thread(ctx, bob.ID, "dave")
	require.NoError(t, err)
	require.Len(t, msgs, 1, "dave's message to bob is kept")
	assert.Equal(t, "The file is under the bench.", msgs[0].Body)
	_, msgs, err = s.Thread(ctx, bob.ID, "carol")
	require.NoError(t, err)
	require.Len(t, msgs, game.KeepMessages, "carol's newest")
	assert.Equal(t, "patient spam 499", msgs[len(msgs)-1].Body)

	wire, err = s.Events(ctx, bob.ID, game.WireLines) // as the wire page shows it
	require.NoError(t, err)
	assert.Contains(t, Texts(wire), theft, "the theft alert is still on bob's wire")
	alerts := 0
	for _, text := range Texts(wire) {
		if strings.HasPrefix(text, "A private message from carol") {
			alerts++
		}
	}
	assert.Equal(t, game.KeepMessageAlerts, alerts, "carol's newest alerts")
}

func TestMessageLimit(t *testing.T) {
	// Ensure the limit is a bucket of MessageBurst refilled one message
	// every MessageEvery, on the clock the turn gives, that a refusal says
	// how long to wait, and that a clock set back costs one wait, not a
	// wait until then.
	now := Epoch
	turn := func(full time.Time) *game.Turn {
		return &game.Turn{Now: now, MessagesFull: full, Actor: &game.Player{ID: 1}, Target: &game.Player{ID: 2, Name: "bob"}}
	}
	var full time.Time
	for i := range game.MessageBurst {
		r, err := game.Resolve(turn(full), game.Action{Kind: game.Message, To: "bob", Body: "hi"})
		require.NoError(t, err, "message %d", i)
		full = r.MessagesFull
	}
	assert.Equal(t, now.Add(game.MessageBurst*game.MessageEvery), full)
	_, err := game.Resolve(turn(full), game.Action{Kind: game.Message, To: "bob", Body: "hi"})
	RequireCode(t, err, game.EINVALID, "wait 30 more seconds")
	now = now.Add(game.MessageEvery - time.Second)
	_, err = game.Resolve(turn(full), game.Action{Kind: game.Message, To: "bob", Body: "hi"})
	RequireCode(t, err, game.EINVALID, "wait 1 more second before")
	now = now.Add(time.Second)
	r, err := game.Resolve(turn(full), game.Action{Kind: game.Message, To: "bob", Body: "hi"})
	require.NoError(t, err)
	assert.Equal(t, full.Add(game.MessageEvery), r.MessagesFull)

	now = Epoch.Add(-time.Hour) // the clock set back an hour
	_, err = game.Resolve(turn(r.MessagesFull), game.Action{Kind: game.Message, To: "bob", Body: "hi"})
	RequireCode(t, err, game.EINVALID, "wait 30 more seconds")
}

func TestStore_FactionChannelsApart(t *testing.T) {
	// Ensure each channel of the board keeps its own KeepPosts: 300 posts
	// on the FBI's channel (and as many in public) leave the MIB's channel
	// post after the next tick; and the unread counts lose the posts
	// pruned, down to the posts by others still kept.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	c := MustRegister(t, s, "carol", game.FBI) // never opens the board
	_, err := s.Act(ctx, b.ID, game.Action{Kind: game.PostMessage, Body: "MIB eyes only.", FactionOnly: true})
	require.NoError(t, err)
	var bodies []string
	for i := range 300 {
		bodies = append(bodies, fmt.Sprint("FBI post ", i))
	}
	require.NoError(t, s.AddChannelPosts(ctx, c.ID, game.FBI, bodies[:10]))
	require.NoError(t, s.AddChannelPosts(ctx, a.ID, game.FBI, bodies[10:]))
	require.NoError(t, s.AddPosts(ctx, a.ID, bodies))
	require.Equal(t, 290, MustPlayer(t, s, c.ID).UnreadFaction)
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)

	mib, err := s.Posts(ctx, game.MIB, 1000)
	require.NoError(t, err)
	var kept []string
	for _, p := range mib {
		if p.FactionOnly {
			kept = append(kept, p.Body)
		}
	}
	assert.Equal(t, []string{"MIB eyes only."}, kept, "the MIB's channel")
	assert.Equal(t, game.KeepPosts, MustCount(t, s, `SELECT count(*) FROM posts WHERE faction = 'FBI'`))
	assert.Equal(t, game.KeepPosts, MustCount(t, s, `SELECT count(*) FROM posts WHERE faction IS NULL`))
	assert.Equal(t, game.KeepPosts, MustPlayer(t, s, c.ID).UnreadFaction, "carol's posts were the oldest: all kept are by others")
	assert.Equal(t, 0, MustPlayer(t, s, a.ID).UnreadFaction)
}
