package game_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Snapshot is everything an action may change, for "nothing changed" checks.
type Snapshot struct {
	Players  []game.Player
	Sources  []game.Source
	News     []game.Event
	Feeds    map[int64][]game.Event
	Posts    []game.Post
	Dossiers map[int64][]game.Dossier
}

func MustSnapshot(tb testing.TB, s *TestStore) Snapshot {
	tb.Helper()
	ctx := context.Background()
	r, err := s.Ranking(ctx)
	require.NoError(tb, err)
	snap := Snapshot{Players: r.Players, Feeds: map[int64][]game.Event{}, Dossiers: map[int64][]game.Dossier{}}
	snap.Sources, err = s.Sources(ctx)
	require.NoError(tb, err)
	snap.News, err = s.News(ctx, 1000)
	require.NoError(tb, err)
	for _, f := range []game.Faction{game.FBI, game.MIB} { // each side's view of the board
		posts, err := s.Posts(ctx, f, 1000)
		require.NoError(tb, err)
		snap.Posts = append(snap.Posts, posts...)
	}
	for _, p := range r.Players {
		snap.Feeds[p.ID], err = s.Events(ctx, p.ID, 1000)
		require.NoError(tb, err)
		snap.Dossiers[p.ID], err = s.Dossiers(ctx, p.ID)
		require.NoError(tb, err)
	}
	return snap
}

func TestStore_Act(t *testing.T) {
	ctx := context.Background()
	t.Run("RecruitOK", func(t *testing.T) {
		// Ensure AP and cash are deducted and the outcome lands in the feed.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "alice", game.FBI)
		out, err := s.Act(ctx, p.ID, game.Action{Kind: game.Recruit})
		require.NoError(t, err)
		assert.Equal(t, "You recruited an agent for $100. You now run 3 agents.", out.Text)
		got := MustPlayer(t, s, p.ID)
		assert.Equal(t, [3]int{game.StartAP - game.RecruitAP, 200, 3}, [3]int{got.AP, got.Cash, got.Agents})
		feed, err := s.Events(ctx, p.ID, 1)
		require.NoError(t, err)
		assert.Equal(t, []string{out.Text}, Texts(feed))
	})
	t.Run("ErrInvalidChangesNothing", func(t *testing.T) {
		// Ensure a refused action changes nothing at all.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		c := MustRegister(t, s, "carol", game.FBI)
		for range 3 {
			_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Recruit})
			require.NoError(t, err)
		}
		before := MustSnapshot(t, s)
		for _, tc := range []struct {
			action game.Action
			msg    string
		}{
			{game.Action{Kind: game.Recruit}, "Not enough cash: recruiting costs $100, you have $0."},
			{game.Action{Kind: game.Haggle, SourceID: 1, Offer: 10}, "You offered $10 but have only $0."},
			{game.Action{Kind: game.Steal, TargetID: b.ID}, fmt.Sprintf("bob is protected from theft until tick %d", game.NewPlayerProtection)},
			{game.Action{Kind: game.Spy, TargetID: c.ID}, "You cannot spy on carol: carol is FBI, like you"},
			{game.Action{Kind: game.Spy, TargetID: a.ID}, "You cannot spy on yourself."},
			{game.Action{Kind: game.PostMessage, Body: "   "}, "Your post is empty."},
			{game.Action{Kind: "vote"}, `Unknown action "vote".`},
		} {
			_, err := s.Act(ctx, a.ID, tc.action)
			RequireCode(t, err, game.EINVALID, tc.msg)
		}
		assert.Equal(t, before, MustSnapshot(t, s))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: 99, Offer: 10})
		RequireCode(t, err, game.ENOTFOUND, "There is no source #99.")
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.Spy, TargetID: 99})
		RequireCode(t, err, game.ENOTFOUND, "There is no player #99 to target.")
		_, err = s.Act(ctx, 99, game.Action{Kind: game.Rumor})
		RequireCode(t, err, game.ENOTFOUND, "There is no player #99.")
	})
	t.Run("HaggleOK", func(t *testing.T) {
		// Ensure an offer at the asking price always buys, and the deal is news.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
		got := MustPlayer(t, s, a.ID)
		assert.Equal(t, [3]int{game.StartAP - game.HaggleAP, 300 - src.Price, 1}, [3]int{got.AP, got.Cash, got.Secrets})
		after := MustSource(t, s, src.Name)
		assert.Equal(t, src.Secrets-1, after.Secrets)
		assert.Greater(t, after.Price, src.Price)
		requireNews(t, s, "alice (FBI) bought a Secret from Late-Night Radio Host.")
	})
	t.Run("HaggleBurns", func(t *testing.T) {
		// Ensure a deal with a source as hot as it gets burns it, at a fine
		// for the burner, and the source then refuses to deal. (The chance
		// below that is in TestResolve.)
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		src := MustSource(t, s, "Deep Throat")
		require.NoError(t, s.SetHeat(ctx, src.ID, game.BurnHeat))
		offer := (src.Price + game.LowballShare - 1) / game.LowballShare
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: offer, Price: src.Price})
		require.NoError(t, err)
		src = MustSource(t, s, src.Name)
		require.NotZero(t, src.BurnedUntil)
		assert.Contains(t, out.Text, "you burned the source, and covering your tracks cost you")
		requireNews(t, s, "Deep Throat was burned after a deal with alice (FBI)")
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: 1})
		RequireCode(t, err, game.EINVALID, fmt.Sprintf("Deep Throat is burned and lying low until tick %d.", src.BurnedUntil))
	})
	t.Run("HagglePriceMoved", func(t *testing.T) {
		// Ensure an offer made at a price that has since moved is refused
		// with the new price and odds, and changes nothing.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err := s.Act(ctx, b.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price, Price: src.Price})
		require.NoError(t, err)
		now := MustSource(t, s, src.Name).Price
		before := MustSnapshot(t, s)
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price, Price: src.Price})
		RequireCode(t, err, game.EINVALID, fmt.Sprintf("price rose from $%d to $%d since you looked: your $%d offer is no longer a sure deal, it would now have %s odds.",
			src.Price, now, src.Price, game.Percent(float64(src.Price)/float64(now))))
		assert.Equal(t, before, MustSnapshot(t, s))
	})
	t.Run("HagglePriceFell", func(t *testing.T) {
		// Ensure an offer made at a price that has since fallen goes
		// ahead: a tick's drift of $1 after a sale made it better, not
		// worse (in play, such offers were refused as "moved").
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err := s.Act(ctx, b.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price, Price: src.Price})
		require.NoError(t, err)
		seen := MustSource(t, s, src.Name).Price
		s.Time.Add(Interval)
		_, err = s.Tick(ctx)
		require.NoError(t, err)
		fell := MustSource(t, s, src.Name).Price
		require.Less(t, fell, seen, "the tick drifted the price down")
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: seen - 1, Price: seen})
		require.NoError(t, err, "an offer at the fallen price is not refused")
		assert.Contains(t, out.Text, fmt.Sprintf("took your $%d", fell), "a sure deal at the new price, which is all it costs")
	})
	t.Run("SpyIsNews", func(t *testing.T) {
		// Ensure every spy attempt, won or lost, names the target in the news, and a win fills the dossier.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		for range 10 {
			out, err := s.Act(ctx, b.ID, game.Action{Kind: game.Spy, TargetID: a.ID})
			require.NoError(t, err)
			news, err := s.News(ctx, 1)
			require.NoError(t, err)
			require.Contains(t, news[0].Text, "alice (FBI)")
			feed, err := s.Events(ctx, a.ID, 1)
			require.NoError(t, err)
			if strings.Contains(out.Text, "went through") {
				assert.Equal(t, "Someone went through your files.", feed[0].Text)
				requireDossier(t, s, b.ID, a)
			} else {
				assert.Equal(t, "bob (MIB) was caught spying on you.", feed[0].Text)
				assert.Equal(t, "bob (MIB) was caught spying on alice (FBI).", news[0].Text)
			}
		}
		assert.Equal(t, game.StartAP-10*game.SpyAP, MustPlayer(t, s, b.ID).AP)
	})
	t.Run("StealOK", func(t *testing.T) {
		// Ensure a steal moves a Secret or costs an agent, and is news
		// either way; in a game of two the security counts twice.
		s, a, b := mustRobbable(t)
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Steal, TargetID: b.ID})
		require.NoError(t, err)
		assert.Contains(t, out.Text, fmt.Sprintf("(security 1 ×%d head to head + %d going in blind + a", game.DuoSecurity, game.BlindDefence),
			"no dossier: the thief goes in blind, against security DuoSecurity times")
		reports, err := s.Reports(ctx, a.ID, 1)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("security 1 ×%d head to head + %d going in blind", game.DuoSecurity, game.BlindDefence), reports[0].Why(),
			"the report kept says so too")
		pa, pb := MustPlayer(t, s, a.ID), MustPlayer(t, s, b.ID)
		if strings.Contains(out.Text, "stole") {
			assert.Equal(t, [2]int{1, 0}, [2]int{pa.Secrets, pb.Secrets})
			requireNews(t, s, "Someone stole a Secret from bob (MIB).")
		} else {
			assert.Equal(t, [2]int{0, 1}, [2]int{pa.Secrets, pb.Secrets})
			assert.Equal(t, 1, pa.Agents)
			requireNews(t, s, "alice (FBI) was caught trying to steal from bob (MIB)")
		}
	})
	t.Run("StealCased", func(t *testing.T) {
		// Ensure a teammate's fresh dossier cases the place: the thief
		// rolls against the target's security alone.
		s, a, b := mustRobbable(t)
		c := MustRegister(t, s, "carol", game.FBI)
		for range game.StartAP {
			if out, err := s.Act(ctx, c.ID, game.Action{Kind: game.Spy, TargetID: b.ID}); err == nil && strings.Contains(out.Text, "went through") {
				break
			}
		}
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Steal, TargetID: b.ID})
		require.NoError(t, err)
		assert.Contains(t, out.Text, "(security 1 + a", "carol's dossier cases the place for alice; three players: security once")
	})
	t.Run("StealThreePlayers", func(t *testing.T) {
		// Ensure at a table of three a thief faces the security once.
		s, a, b := mustRobbable(t)
		MustRegister(t, s, "carol", game.FBI)
		out, err := s.Act(ctx, a.ID, game.Action{Kind: game.Steal, TargetID: b.ID})
		require.NoError(t, err)
		assert.Contains(t, out.Text, fmt.Sprintf("(security 1 + %d going in blind + a", game.BlindDefence))
	})
	t.Run("PostOK", func(t *testing.T) {
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: " I want to believe. "})
		require.NoError(t, err)
		posts, err := s.Posts(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, posts, 1)
		assert.Equal(t, game.Post{ID: posts[0].ID, Author: "alice", Faction: game.FBI, Body: "I want to believe.", At: Epoch},
			posts[0])
	})
	t.Run("ErrPostCooldown", func(t *testing.T) {
		// Ensure a second post within PostCooldown is refused, saying how long
		// to wait, and stores nothing; and that the cooldown is per player.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "first"})
		require.NoError(t, err)
		s.Time.Add(game.PostCooldown - 1500*time.Millisecond)
		before := MustSnapshot(t, s)
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "second"})
		RequireCode(t, err, game.EINVALID, "One post per 30 seconds: wait 2 more seconds before posting again.")
		assert.Equal(t, before, MustSnapshot(t, s))
		_, err = s.Act(ctx, b.ID, game.Action{Kind: game.PostMessage, Body: "bob's first"})
		require.NoError(t, err, "another player's cooldown is his own")
	})
	t.Run("PostAfterCooldown", func(t *testing.T) {
		// Ensure a post exactly PostCooldown after the last one is allowed,
		// and the next cooldown runs from it, not from the refused attempt.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "first"})
		require.NoError(t, err)
		s.Time.Add(game.PostCooldown / 2)
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "too soon"})
		RequireCode(t, err, game.EINVALID, "wait 15 more seconds")
		s.Time.Add(game.PostCooldown / 2)
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "second"})
		require.NoError(t, err)
		posts, err := s.Posts(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, posts, 2)
		assert.Equal(t, [2]string{"second", "first"}, [2]string{posts[0].Body, posts[1].Body})
		assert.Equal(t, Epoch.Add(game.PostCooldown), posts[0].At)
		s.Time.Add(time.Second)
		_, err = s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "third"})
		RequireCode(t, err, game.EINVALID, "wait 29 more seconds")
	})
	t.Run("Concurrent", func(t *testing.T) {
		// Ensure concurrent actions are atomic: $300 buys exactly three agents.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, errs[i] = s.Act(ctx, a.ID, game.Action{Kind: game.Recruit}) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				RequireCode(t, err, game.EINVALID, "Not enough cash")
			}
		}
		assert.Equal(t, 3, ok)
		got := MustPlayer(t, s, a.ID)
		assert.Equal(t, [3]int{0, 5, game.StartAP - 3*game.RecruitAP}, [3]int{got.Cash, got.Agents, got.AP})
	})
}

// MustSource returns the source called name.
// mustRobbable opens a store with alice (FBI) and bob (MIB), bob holding a
// Secret he bought and both past their new-player protection.
func mustRobbable(tb testing.TB) (s *TestStore, alice, bob *game.Player) {
	tb.Helper()
	ctx := context.Background()
	s = MustOpenStore(tb)
	alice = MustRegister(tb, s, "alice", game.FBI)
	bob = MustRegister(tb, s, "bob", game.MIB)
	src := MustSource(tb, s, "Area 51 Janitor")
	_, err := s.Act(ctx, bob.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
	require.NoError(tb, err)
	s.Time.Add(game.NewPlayerProtection * Interval)
	n, err := s.Tick(ctx)
	require.NoError(tb, err)
	require.Equal(tb, game.NewPlayerProtection, n)
	// A thief whose cash would buy the gap may not steal (CanStealFrom):
	// alice has spent hers.
	require.NoError(tb, s.SetSecrets(ctx, alice.ID, 0, 0))
	return s, alice, bob
}

func MustSource(tb testing.TB, s *TestStore, name string) game.Source {
	tb.Helper()
	sources, err := s.Sources(context.Background())
	require.NoError(tb, err)
	for _, src := range sources {
		if src.Name == name {
			return src
		}
	}
	require.FailNow(tb, "no source "+name)
	return game.Source{}
}

// requireNews fails unless the latest news line contains text.
func requireNews(tb testing.TB, s *TestStore, text string) {
	tb.Helper()
	news, err := s.News(context.Background(), 1)
	require.NoError(tb, err)
	require.Len(tb, news, 1)
	require.Contains(tb, news[0].Text, text)
}

// requireDossier fails unless playerID's dossier on target holds target's current stats.
func requireDossier(tb testing.TB, s *TestStore, playerID int64, target *game.Player) {
	tb.Helper()
	ds, err := s.Dossiers(context.Background(), playerID)
	require.NoError(tb, err)
	require.Len(tb, ds, 1)
	now := MustPlayer(tb, s, target.ID)
	now.CreatedAt = ds[0].Target.CreatedAt // protection, like the rest, is as it is now
	assert.True(tb, ds[0].Known)
	assert.Equal(tb, *now, ds[0].Target)
}
