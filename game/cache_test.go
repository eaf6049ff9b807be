package game_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
		assert.Equal(t, game.Page[game.Player]{Rows: standings(all.Players[:game.PageSize]), Number: 1, Total: n}, p1)
		assert.Equal(t, game.Page[game.Player]{Rows: standings(all.Players[game.PageSize:]), Number: 2, Total: n}, p2)
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

// standings is what RankingPage keeps of each player: their standing.
func standings(players []game.Player) []game.Player {
	out := make([]game.Player, len(players))
	for i, p := range players {
		out[i] = game.Player{ID: p.ID, Name: p.Name, Faction: p.Faction, Secrets: p.Secrets, ProtectedUntil: p.ProtectedUntil}
	}
	return out
}

func TestStore_CacheKeepsUnrelated(t *testing.T) {
	// Ensure a write leaves the cached pages of the players it did not
	// touch in place (served again from the cache, the same slice), and
	// drops those it changed.
	ctx := context.Background()
	s := MustOpenStore(t)
	alice := MustRegister(t, s, "alice", game.FBI)
	bob := MustRegister(t, s, "bob", game.MIB)
	carol := MustRegister(t, s, "carol", game.FBI)
	MustRegister(t, s, "dave", game.MIB)
	src, err := s.Sources(ctx)
	require.NoError(t, err)
	cheap := slices.MinFunc(src, func(a, b game.Source) int { return a.Price - b.Price }) // within bob's cash
	sess, err := s.CreateSession(ctx, carol.ID)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		write   game.Action
		by      *game.Player
		dropped []string // carol's pages the write changes
	}{
		{"Message", game.Action{Kind: game.Message, To: "bob", Body: "Meet me at noon."}, alice, nil},
		{"Recruit", game.Action{Kind: game.Recruit}, alice, nil},
		{"Spy", game.Action{Kind: game.Spy, TargetID: bob.ID}, alice, []string{"dossiers", "news"}},
		// A Secret bought changes the ranking, and the dossiers (which show
		// the Secrets of a player the side holds no file on).
		{"Haggle", game.Action{Kind: game.Haggle, SourceID: cheap.ID, Offer: cheap.Price}, bob, []string{"ranking", "sources", "news", "dossiers"}},
		{"Post", game.Action{Kind: game.PostMessage, Body: "Trust no one."}, bob, []string{"board"}},
		{"MessageToCarol", game.Action{Kind: game.Message, To: "carol", Body: "Hello."}, bob, []string{"feed", "inbox", "session"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := carolsPages(t, s, carol, sess.ID)
			_, err := s.Act(ctx, tc.by.ID, tc.write)
			require.NoError(t, err)
			after := carolsPages(t, s, carol, sess.ID)
			for page, p := range before {
				if slices.Contains(tc.dropped, page) {
					assert.NotSame(t, p, after[page], "%s is read again", page)
				} else {
					assert.Same(t, p, after[page], "%s stays cached", page)
				}
			}
		})
	}
}

// carolsPages reads what carol's pages show, through the read cache, and
// returns, by page, a pointer into each value (the same pointer: the
// same cached value).
func carolsPages(t *testing.T, s *TestStore, carol *game.Player, sid string) map[string]any {
	t.Helper()
	ctx := context.Background()
	me, _, err := s.SessionState(ctx, sid)
	require.NoError(t, err)
	feed, err := s.Events(ctx, carol.ID, 10)
	require.NoError(t, err)
	dossiers, err := s.DossiersPage(ctx, carol.ID, 1)
	require.NoError(t, err)
	ranking, _, err := s.RankingPage(ctx, 1)
	require.NoError(t, err)
	news, err := s.NewsPage(ctx, 1)
	require.NoError(t, err)
	board, err := s.PostsPage(ctx, game.FBI, 1)
	require.NoError(t, err)
	sources, err := s.Sources(ctx)
	require.NoError(t, err)
	inbox, err := s.Inbox(ctx, carol.ID)
	require.NoError(t, err)
	pages := map[string]any{"session": me, "feed": &feed[0], "dossiers": &dossiers.Rows[0], "ranking": &ranking.Rows[0],
		"news": &news.Rows[0], "sources": &sources[0]}
	if len(board.Rows) > 0 {
		pages["board"] = &board.Rows[0]
	}
	if len(inbox) > 0 {
		pages["inbox"] = &inbox[0]
	}
	return pages
}

func TestStore_CacheMatchesDatabase(t *testing.T) {
	// Ensure that after any write every cached read returns what the
	// database holds: a store reading through its cache is compared, after
	// each of many random orders, logins, logouts, reads of a conversation
	// or the board, and ticks, with a second store on the same file that
	// reads without one.
	ctx := context.Background()
	s := MustOpenStore(t)
	fresh, err := game.Open(s.Path, func() game.Options { o := s.Options; o.NoReadCache = true; return o }())
	require.NoError(t, err)
	t.Cleanup(func() { fresh.Close() })
	var players []*game.Player
	sids := map[int64]string{}
	for i := range 6 {
		p := MustRegister(t, s, fmt.Sprintf("agent%d", i), []game.Faction{game.FBI, game.MIB}[i%2])
		players = append(players, p)
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		sids[p.ID] = sess.ID
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 150 {
		requireSameReads(t, s.Store, fresh, players, sids) // fills the cache
		what := randomWrite(t, s, rng, players, sids)
		requireSameReads(t, s.Store, fresh, players, sids)
		if t.Failed() {
			t.Fatalf("step %d: after %s", step, what)
		}
	}
}

// randomWrite makes one write of a kind drawn from rng, as one of players
// (sessions sids), and says what it was.
func randomWrite(t *testing.T, s *TestStore, rng *rand.Rand, players []*game.Player, sids map[int64]string) string {
	t.Helper()
	ctx := context.Background()
	p, q := players[rng.IntN(len(players))], players[rng.IntN(len(players))]
	s.Time.Add(game.PostCooldown / 4)
	switch n := rng.IntN(16); {
	case n < 9:
		a := []game.Action{{Kind: game.Recruit}, {Kind: game.Fortify}, {Kind: game.Rumor},
			{Kind: game.Haggle, SourceID: 1 + rng.Int64N(3), Offer: 20 + rng.IntN(200)},
			{Kind: game.Spy, TargetID: q.ID}, {Kind: game.Steal, TargetID: q.ID},
			{Kind: game.PostMessage, Body: "Trust no one.", FactionOnly: rng.IntN(2) == 0},
			{Kind: game.Message, To: q.Name, Body: "Hello."}, {Kind: game.Message, To: q.Name, Body: "Again."}}[n]
		_, err := s.Act(ctx, p.ID, a)
		return fmt.Sprintf("%s's %s (%v)", p.Name, a.Kind, err)
	case n < 11:
		_, _, err := s.Thread(ctx, p.ID, q.Name)
		return fmt.Sprintf("%s reading %s's messages (%v)", p.Name, q.Name, err)
	case n < 12:
		me, _, err := s.SessionState(ctx, sids[p.ID])
		require.NoError(t, err)
		return fmt.Sprintf("%s reading the board (%v)", p.Name, s.SeenFaction(ctx, me))
	case n < 13:
		require.NoError(t, s.DeleteSession(ctx, sids[p.ID]))
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		sids[p.ID] = sess.ID
		return p.Name + " logging out and in"
	default:
		s.Time.Add(Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		return "a tick"
	}
}

// requireSameReads compares every cached read of cached, for each of
// players, with fresh's.
func requireSameReads(t *testing.T, cached, fresh *game.Store, players []*game.Player, sids map[int64]string) {
	t.Helper()
	ctx := context.Background()
	same := func(name string, read func(*game.Store) (any, error)) {
		t.Helper()
		a, aerr := read(cached)
		b, berr := read(fresh)
		assert.Equal(t, fmt.Sprint(berr), fmt.Sprint(aerr), name) // a session may expire
		assert.Equal(t, b, a, name)
	}
	same("clock", func(s *game.Store) (any, error) { return s.Clock(ctx) })
	same("sources", func(s *game.Store) (any, error) { return s.Sources(ctx) })
	same("news", func(s *game.Store) (any, error) { return s.NewsPage(ctx, 1) })
	same("hall", func(s *game.Store) (any, error) { return s.HallOfFame(ctx) })
	same("careers", func(s *game.Store) (any, error) { return s.Careers(ctx, 10) })
	same("ranking", func(s *game.Store) (any, error) { return s.Ranking(ctx) })
	same("ranking page", func(s *game.Store) (any, error) {
		p, totals, err := s.RankingPage(ctx, 1)
		return []any{p, totals}, err
	})
	for _, f := range []game.Faction{game.FBI, game.MIB} {
		same("board "+string(f), func(s *game.Store) (any, error) { return s.PostsPage(ctx, f, 1) })
	}
	for _, p := range players {
		same(p.Name+"'s session", func(s *game.Store) (any, error) {
			me, clock, err := s.SessionState(ctx, sids[p.ID])
			return []any{me, clock}, err
		})
		same(p.Name+"'s feed", func(s *game.Store) (any, error) { return s.Events(ctx, p.ID, 10) })
		same(p.Name+"'s dossiers", func(s *game.Store) (any, error) { return s.DossiersPage(ctx, p.ID, 1) })
		same(p.Name+"'s inbox", func(s *game.Store) (any, error) { return s.Inbox(ctx, p.ID) })
		same(p.Name+"'s reports", func(s *game.Store) (any, error) { return s.Reports(ctx, p.ID, 10) })
		same(p.Name+"'s profile", func(s *game.Store) (any, error) { return s.Profile(ctx, p.Name) })
	}
}
