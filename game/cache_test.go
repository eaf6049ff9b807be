package game_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestStore_Version(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	t.Run("Reads", func(t *testing.T) {
		// Ensure reads leave the version alone.
		v := s.Version()
		_, err := s.Clock(ctx)
		require.NoError(t, err)
		_, err = s.NewsPage(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, v, s.Version())
	})
	t.Run("Writes", func(t *testing.T) {
		// Ensure every kind of write moves the version on.
		v := s.Version()
		p := MustRegister(t, s, "alice", game.FBI)
		assert.Greater(t, s.Version(), v)
		v = s.Version()
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		assert.Greater(t, s.Version(), v)
		v = s.Version()
		_, err = s.Act(ctx, p.ID, game.Action{Kind: game.Recruit})
		require.NoError(t, err)
		assert.Greater(t, s.Version(), v)
		v = s.Version()
		s.Time.Add(Interval)
		_, err = s.Tick(ctx)
		require.NoError(t, err)
		assert.Greater(t, s.Version(), v)
		v = s.Version()
		require.NoError(t, s.DeleteSession(ctx, sess.ID))
		assert.Greater(t, s.Version(), v)
	})
	t.Run("Refused", func(t *testing.T) {
		// Ensure a refused action, which writes nothing, keeps the version.
		p := MustRegister(t, s, "bob", game.MIB)
		v := s.Version()
		_, err := s.Act(ctx, p.ID, game.Action{Kind: game.Haggle, SourceID: 999, Offer: 1})
		require.Error(t, err)
		assert.Equal(t, v, s.Version())
	})
}

func TestStore_Cache(t *testing.T) {
	// Ensure what a page read before a write is never served after it: each
	// cached read sees the write at once.
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	for range 2 { // twice: the second time from the cache
		news, err := s.News(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"bob joined the MIB.", "alice joined the FBI."}, Texts(news))
		_, err = s.Events(ctx, a.ID, 10)
		require.NoError(t, err)
		_, _, err = s.RankingPage(ctx, 1)
		require.NoError(t, err)
		_, err = s.Clock(ctx)
		require.NoError(t, err)
	}
	_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: "Trust no one."})
	require.NoError(t, err)
	MustRegister(t, s, "carol", game.FBI)
	news, err := s.News(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, "carol joined the FBI.", news[0].Text)
	feed, err := s.Events(ctx, a.ID, 10)
	require.NoError(t, err)
	assert.Equal(t, "You posted on the board.", feed[0].Text)
	posts, err := s.PostsPage(ctx, game.FBI, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, posts.Total)
	rk, totals, err := s.RankingPage(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, 3, rk.Total)
	assert.Equal(t, []game.FactionTotal{{Faction: game.FBI, Players: 2}, {Faction: game.MIB, Players: 1}}, totals)
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	c, err := s.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Tick)
	ds, err := s.DossiersPage(ctx, b.ID, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, ds.Total)
}

func TestStore_Pages(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	const n = game.PageSize + 12
	var first *game.Player
	for i := range n {
		p := MustRegister(t, s, fmt.Sprintf("agent%03d", i), []game.Faction{game.FBI, game.MIB}[i%2])
		if first == nil {
			first = p
		}
		if i%3 == 0 { // some cash differences, so the ranking is not by name alone
			_, err := s.Act(ctx, p.ID, game.Action{Kind: game.Recruit})
			require.NoError(t, err)
		}
	}
	t.Run("Ranking", func(t *testing.T) {
		// Ensure the pages of the ranking, one after the other, are Rank's order, and the totals Rank's.
		all, err := s.Ranking(ctx)
		require.NoError(t, err)
		p1, totals, err := s.RankingPage(ctx, 1)
		require.NoError(t, err)
		p2, _, err := s.RankingPage(ctx, 2)
		require.NoError(t, err)
		assert.Equal(t, game.Page[game.Player]{Rows: all.Players[:game.PageSize], Number: 1, Total: n}, p1)
		assert.Equal(t, game.Page[game.Player]{Rows: all.Players[game.PageSize:], Number: 2, Total: n}, p2)
		assert.Equal(t, all.Factions, totals)
		assert.Equal(t, 2, p1.Pages())
		assert.Equal(t, game.PageSize, p2.Offset())
	})
	t.Run("Clamped", func(t *testing.T) {
		// Ensure a page past the last is the last, and one below 1 the first.
		p, _, err := s.RankingPage(ctx, 99)
		require.NoError(t, err)
		assert.Equal(t, 2, p.Number)
		assert.Len(t, p.Rows, 12)
		d, err := s.DossiersPage(ctx, first.ID, 0)
		require.NoError(t, err)
		assert.Equal(t, 1, d.Number)
	})
	t.Run("Dossiers", func(t *testing.T) {
		// Ensure the dossier pages are Dossiers' order, split.
		all, err := s.Dossiers(ctx, first.ID)
		require.NoError(t, err)
		require.Len(t, all, n-1)
		p1, err := s.DossiersPage(ctx, first.ID, 1)
		require.NoError(t, err)
		p2, err := s.DossiersPage(ctx, first.ID, 2)
		require.NoError(t, err)
		assert.Equal(t, all, append(append([]game.Dossier{}, p1.Rows...), p2.Rows...))
		assert.Equal(t, n-1, p2.Total)
	})
	t.Run("News", func(t *testing.T) {
		// Ensure the news pages are News' order, split.
		all, err := s.News(ctx, game.KeepNews)
		require.NoError(t, err)
		require.Len(t, all, n)
		p2, err := s.NewsPage(ctx, 2)
		require.NoError(t, err)
		assert.Equal(t, all[game.PageSize:], p2.Rows)
	})
	t.Run("Empty", func(t *testing.T) {
		// Ensure an empty list is one empty page.
		p, err := s.PostsPage(ctx, game.FBI, 3)
		require.NoError(t, err)
		assert.Equal(t, game.Page[game.Post]{Number: 1}, p)
		assert.Equal(t, 1, p.Pages())
	})
}

func TestStore_Sync(t *testing.T) {
	// Ensure a write by another Store on the same file is seen after Sync, and only a write moves the version.
	ctx := context.Background()
	a := MustOpenStore(t)
	b, err := game.Open(a.Path, a.Options)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	require.NoError(t, a.Sync(ctx))
	news, err := a.News(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, news)
	v := a.Version()
	require.NoError(t, a.Sync(ctx))
	assert.Equal(t, v, a.Version(), "nothing was written")

	_, err = b.Register(ctx, "mulder", "trustno1-trustno1", game.FBI)
	require.NoError(t, err)
	news, err = a.News(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, news, "without Sync, the cache does not see another connection's write")
	require.NoError(t, a.Sync(ctx))
	assert.Greater(t, a.Version(), v)
	news, err = a.News(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"mulder joined the FBI."}, Texts(news))
}

func TestStore_NoReadCache(t *testing.T) {
	// Ensure with the teaching switch NoReadCache every read goes to the
	// database: another Store's write is seen at once, without Sync.
	ctx := context.Background()
	a := MustOpenStore(t, func(o *game.Options) { o.NoReadCache = true })
	b, err := game.Open(a.Path, a.Options)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	news, err := a.News(ctx, 10)
	require.NoError(t, err)
	require.Empty(t, news)
	_, err = b.Register(ctx, "mulder", "trustno1-trustno1", game.FBI)
	require.NoError(t, err)
	news, err = a.News(ctx, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"mulder joined the FBI."}, Texts(news))
}
