package game_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestStore_Seed(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	mulder := MustRegister(t, s, "mulder", game.FBI)
	t.Run("OK", func(t *testing.T) {
		// Ensure Seed adds the players, numbered after those there, with
		// their feeds, dossiers, and the news and board filled.
		st, err := s.Seed(ctx, 40)
		require.NoError(t, err)
		assert.Equal(t, game.SeedStats{Players: 40, FeedLines: 40 * game.SeedFeedLines, News: game.KeepNews,
			Posts: game.KeepPosts, Intel: 40 * game.SeedIntel}, st)
		rk, totals, err := s.RankingPage(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, 41, rk.Total)
		assert.Equal(t, 21, totals[0].Players, "FBI: mulder and every other seeded player")
		news, err := s.NewsPage(ctx, 1)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, news.Total, game.KeepNews)
		fbi, err := s.PostsPage(ctx, game.FBI, 1)
		require.NoError(t, err)
		mib, err := s.PostsPage(ctx, game.MIB, 1)
		require.NoError(t, err)
		assert.Equal(t, 2*game.KeepPosts-game.KeepPosts/10, fbi.Total+mib.Total,
			"every post is public (read by both factions) but a tenth, each read by one")
		ranked, err := s.Ranking(ctx)
		require.NoError(t, err)
		var first *game.Player
		for i := range ranked.Players {
			if ranked.Players[i].Name == "agent0002" {
				first = &ranked.Players[i]
			}
		}
		require.NotNil(t, first, "numbered after mulder, the game's one player")
		feed, err := s.Events(ctx, first.ID, 50)
		require.NoError(t, err)
		assert.Len(t, feed, game.SeedFeedLines)
		ds, err := s.Dossiers(ctx, first.ID)
		require.NoError(t, err)
		known := 0
		for _, d := range ds {
			if d.Known {
				known++
				assert.NotEqual(t, first.Faction, d.Target.Faction, "dossiers are on the other side")
			}
		}
		assert.Positive(t, known)
		// Ensure nobody can log in as a seeded player.
		login, err := s.LookupLogin(ctx, first.Name)
		require.NoError(t, err)
		_, err = login.Check("password1")
		assert.Equal(t, game.EUNAUTHORIZED, game.ErrorCode(err))
		assert.Equal(t, mulder.ID, MustPlayer(t, s, mulder.ID).ID)
	})
	t.Run("Again", func(t *testing.T) {
		// Ensure a second Seed numbers its players after the first's.
		_, err := s.Seed(ctx, 2)
		require.NoError(t, err)
		_, err = s.LookupLogin(ctx, "agent0043")
		require.NoError(t, err)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		// Ensure a name taken already refuses the whole seeding.
		o := MustOpenStore(t)
		MustRegister(t, o, "agent0002", game.MIB)
		_, err := o.Seed(ctx, 5)
		RequireCode(t, err, game.ECONFLICT, "agent0002")
		rk, _, err := o.RankingPage(ctx, 1)
		require.NoError(t, err)
		assert.Equal(t, 1, rk.Total, "nothing written")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure Seed wants at least one player.
		_, err := s.Seed(ctx, 0)
		RequireCode(t, err, game.EINVALID, "at least one")
	})
}
