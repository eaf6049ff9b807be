package game_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Player(t *testing.T) {
	s := MustOpenStore(t)
	t.Run("OK", func(t *testing.T) {
		p := MustRegister(t, s, "alice", game.FBI)
		assert.Equal(t, p, MustPlayer(t, s, p.ID))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.Player(context.Background(), 42)
		RequireCode(t, err, game.ENOTFOUND, "There is no player #42.")
	})
}

func TestStore_Clock(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Ensure the clock reports the options and the next tick as an absolute time.
		s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 7 })
		s.Time.Add(Interval)
		_, err := s.Tick(context.Background())
		require.NoError(t, err)
		c, err := s.Clock(context.Background())
		require.NoError(t, err)
		assert.Equal(t, int64(7), c.RoundTicks)
		assert.Equal(t, int64(7), c.RoundEnd())
		assert.True(t, c.NextTick().Equal(Epoch.Add(2*Interval)))
	})
}

func TestStore_Events(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	for i := range 3 {
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.PostMessage, Body: fmt.Sprint(i)})
		require.NoError(t, err)
		s.Time.Add(game.PostCooldown)
	}
	t.Run("OK", func(t *testing.T) {
		// Ensure a feed is the player's own lines, newest first, at most limit.
		feed, err := s.Events(ctx, a.ID, 2)
		require.NoError(t, err)
		require.Len(t, feed, 2)
		assert.Greater(t, feed[0].ID, feed[1].ID)
		for _, e := range feed {
			assert.Equal(t, game.Event{ID: e.ID, Tick: 0, At: e.At, PlayerID: a.ID, Text: "You posted on the board."}, e)
		}
		assert.Equal(t, [2]time.Time{Epoch.Add(2 * game.PostCooldown), Epoch.Add(game.PostCooldown)},
			[2]time.Time{feed[0].At, feed[1].At})
		feed, err = s.Events(ctx, b.ID, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"Welcome to the MIB, bob. Nobody can steal from you until tick 36."}, Texts(feed))
	})
	t.Run("NoLimit", func(t *testing.T) {
		feed, err := s.Events(ctx, a.ID, 0)
		require.NoError(t, err)
		assert.Empty(t, feed)
	})
}

func TestStore_News(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	MustRegister(t, s, "alice", game.FBI)
	MustRegister(t, s, "bob", game.MIB)
	t.Run("OK", func(t *testing.T) {
		// Ensure the news is public lines only, newest first.
		news, err := s.News(ctx, 10)
		require.NoError(t, err)
		assert.Equal(t, []string{"bob joined the MIB.", "alice joined the FBI."}, Texts(news))
		for _, e := range news {
			assert.True(t, e.Public)
			assert.Zero(t, e.PlayerID)
		}
		news, err = s.News(ctx, 1)
		require.NoError(t, err)
		assert.Len(t, news, 1)
	})
}

func TestStore_Dossiers(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	MustRegister(t, s, "Carol", game.MIB)
	b := MustRegister(t, s, "bob", game.MIB)
	t.Run("Unknown", func(t *testing.T) {
		// Ensure one dossier per other player, by name regardless of case,
		// with only what everyone sees known: name, faction and protection.
		ds, err := s.Dossiers(ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, ds, 2)
		assert.Equal(t, game.Dossier{Target: game.Player{ID: b.ID, Name: "bob", Faction: game.MIB,
			ProtectedUntil: game.NewPlayerProtection}}, ds[0])
		assert.Equal(t, "Carol", ds[1].Target.Name)
	})
	t.Run("Known", func(t *testing.T) {
		// Ensure a successful spy fills the dossier as of that tick, and later changes do not show.
		s.Time.Add(game.PayTicks * Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		spyUntilKnown(t, s, a.ID, b.ID)
		_, err = s.Act(ctx, b.ID, game.Action{Kind: game.Recruit})
		require.NoError(t, err)
		ds, err := s.Dossiers(ctx, a.ID)
		require.NoError(t, err)
		d := ds[0]
		assert.True(t, d.Known)
		assert.Equal(t, int64(game.PayTicks), d.Tick)
		assert.True(t, d.At.Equal(Epoch.Add(game.PayTicks*Interval)))
		assert.Equal(t, "alice", d.By)
		fresh := game.NewPlayer("bob", game.MIB, 0)
		assert.Equal(t, game.Player{ID: b.ID, Name: "bob", Faction: game.MIB, Cash: game.StartCash + fresh.Income(),
			Agents: game.StartAgents, Security: game.StartSecurity, AP: game.StartAP + game.APPerPay,
			ProtectedUntil: game.NewPlayerProtection}, d.Target)
	})
	t.Run("SharedWithFaction", func(t *testing.T) {
		// Ensure intel is shared within a faction: each reader sees the
		// newest dossier anyone on their side gathered, and nothing the other
		// side or nobody gathered.
		dave := MustRegister(t, s, "dave", game.FBI)
		carol := MustRegister(t, s, "carol2", game.MIB)
		s.Time.Add(game.PayTicks * Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		spyUntilKnown(t, s, b.ID, a.ID) // bob (MIB) files alice at the second payday
		ds, err := s.Dossiers(ctx, dave.ID)
		require.NoError(t, err)
		bob := ds[slices.IndexFunc(ds, func(d game.Dossier) bool { return d.Target.ID == b.ID })]
		assert.Equal(t, [3]any{true, "alice", int64(game.PayTicks)}, [3]any{bob.Known, bob.By, bob.Tick},
			"before dave spies, alice's file is his side's file")
		spyUntilKnown(t, s, dave.ID, b.ID) // and dave files bob, newer than alice's file
		for _, tc := range []struct {
			name           string
			reader, target int64
			by             string // "" for no intel
			tick           int64
		}{
			{"TeammatesNewerFile", a.ID, b.ID, "dave", 2 * game.PayTicks},
			{"OwnNewerFile", dave.ID, b.ID, "dave", 2 * game.PayTicks},
			{"OtherSideFile", carol.ID, a.ID, "bob", 2 * game.PayTicks},
			{"NotTheOtherSidesFile", carol.ID, dave.ID, "", 0},
			{"NobodysFile", a.ID, carol.ID, "", 0},
			{"NoFileOnTeammates", dave.ID, a.ID, "", 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ds, err := s.Dossiers(ctx, tc.reader)
				require.NoError(t, err)
				i := slices.IndexFunc(ds, func(d game.Dossier) bool { return d.Target.ID == tc.target })
				require.GreaterOrEqual(t, i, 0)
				d := ds[i]
				assert.Equal(t, [3]any{tc.by != "", tc.by, tc.tick}, [3]any{d.Known, d.By, d.Tick})
				if !d.Known {
					assert.Equal(t, game.Player{ID: d.Target.ID, Name: d.Target.Name, Faction: d.Target.Faction,
						ProtectedUntil: MustPlayer(t, s, d.Target.ID).ProtectedUntil}, d.Target,
						"only name, faction and protection without intel")
				}
			})
		}
	})
}

func TestStore_Ranking(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	MustRegister(t, s, "carol", game.MIB)
	t.Run("OK", func(t *testing.T) {
		// Ensure Secrets rank first, then names: cash is private, so bob,
		// poorer than carol after recruiting, still comes before her, on
		// both the whole ranking and a page of it (the index's order).
		src := MustSource(t, s, "Crop Circle Farmer")
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
		_, err = s.Act(ctx, b.ID, game.Action{Kind: game.Recruit})
		require.NoError(t, err)
		r, err := s.Ranking(ctx)
		require.NoError(t, err)
		var names []string
		for _, p := range r.Players {
			names = append(names, p.Name)
		}
		assert.Equal(t, []string{"alice", "bob", "carol"}, names)
		assert.Less(t, r.Players[1].Cash, r.Players[2].Cash)
		assert.Equal(t, []game.FactionTotal{{game.FBI, 1, 1}, {game.MIB, 2, 0}}, r.Factions)
		page, totals, err := s.RankingPage(ctx, 1)
		require.NoError(t, err)
		names = names[:0]
		for _, p := range page.Rows {
			names = append(names, p.Name)
		}
		assert.Equal(t, []string{"alice", "bob", "carol"}, names)
		assert.Equal(t, r.Factions, totals)
	})
}

func TestStore_Posts(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t)
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	t.Run("OK", func(t *testing.T) {
		// Ensure posts come newest first with author and faction, at most limit.
		for _, p := range []*game.Player{a, b, a} {
			_, err := s.Act(ctx, p.ID, game.Action{Kind: game.PostMessage, Body: "from " + p.Name})
			require.NoError(t, err)
			s.Time.Add(game.PostCooldown)
		}
		posts, err := s.Posts(ctx, game.MIB, 2)
		require.NoError(t, err)
		require.Len(t, posts, 2)
		assert.Equal(t, [2]string{"alice", "from alice"}, [2]string{posts[0].Author, posts[0].Body})
		assert.Equal(t, game.MIB, posts[1].Faction)
		posts, err = s.Posts(ctx, game.MIB, 0)
		require.NoError(t, err)
		assert.Empty(t, posts)
	})
	t.Run("FactionOnly", func(t *testing.T) {
		// Ensure a faction-only post reaches its faction's readers alone,
		// marked as such, among the public posts.
		out, err := s.Act(ctx, b.ID, game.Action{Kind: game.PostMessage, Body: "MIB eyes only", FactionOnly: true})
		require.NoError(t, err)
		assert.Equal(t, "You posted on the MIB channel; only your side reads it.", out.Text)
		s.Time.Add(game.PostCooldown)
		for _, tc := range []struct {
			reader game.Faction
			want   []string
		}{
			{game.MIB, []string{"MIB eyes only", "from alice", "from bob", "from alice"}},
			{game.FBI, []string{"from alice", "from bob", "from alice"}},
			{"", []string{"from alice", "from bob", "from alice"}},
		} {
			posts, err := s.Posts(ctx, tc.reader, 10)
			require.NoError(t, err)
			var bodies []string
			for _, p := range posts {
				bodies = append(bodies, p.Body)
				assert.Equal(t, p.Body == "MIB eyes only", p.FactionOnly, p.Body)
			}
			assert.Equal(t, tc.want, bodies, "read by %q", tc.reader)
		}
	})
}

func TestStore_DossiersPageWindow(t *testing.T) {
	// Ensure each player's dossiers pages, read from the window its
	// faction shares, are the player's Dossiers page by page: the player's
	// own row left out wherever the player's name falls (before a page,
	// in it, after it), names in any case by SQLite's NOCASE, the latest
	// look of the faction on each target, and of looks at one instant the
	// player's own; and again after a teammate's look.
	ctx := context.Background()
	s := MustOpenStore(t)
	const n = 2*game.PageSize + 10
	var ids []int64
	for i := range n {
		name := fmt.Sprintf("agent%03d", (i*37)%n) // registered out of name order
		if i%3 == 0 {
			name = strings.ToUpper(name[:1]) + name[1:]
		}
		ids = append(ids, MustRegister(t, s, name, []game.Faction{game.FBI, game.MIB}[i%2]).ID)
	}
	// Looks by the first FBI players at the first targets, at ticks and
	// instants of their own; two of them at each of two targets at one
	// instant (a tie).
	MustExec(t, s, `INSERT INTO intel (player_id, target_id, cash, agents, security, secrets, ap, tick, at)
		SELECT sp.id, tg.id, sp.id, 1, 2, 3, 4, sp.id % 5, sp.id * 1000 + tg.id FROM players sp, players tg
		WHERE sp.id <= 12 AND tg.id % 4 = 0 AND sp.id != tg.id AND sp.faction != tg.faction`)
	MustExec(t, s, `UPDATE intel SET tick = 9, at = 77 WHERE target_id IN (4, 100) AND player_id IN (1, 3)`)
	require.NoError(t, s.Sync(ctx))
	check := func(when string) {
		t.Helper()
		for _, id := range ids {
			all, err := s.Dossiers(ctx, id)
			require.NoError(t, err)
			for number := 1; number <= 3; number++ {
				p, err := s.DossiersPage(ctx, id, number)
				require.NoError(t, err)
				want := all[(number-1)*game.PageSize : min(number*game.PageSize, len(all))]
				require.Equal(t, want, p.Rows, "%s: player %d, page %d", when, id, number)
				require.Equal(t, n-1, p.Total)
			}
		}
	}
	check("at first")
	ties, err := s.DossiersPage(ctx, 3, 1)
	require.NoError(t, err)
	for _, d := range ties.Rows {
		if d.Target.ID == 4 {
			assert.Equal(t, MustPlayer(t, s, 3).Name, d.By, "the viewer's own look of the tied ones")
		}
	}
	_, err = s.Act(ctx, ids[0], game.Action{Kind: game.Spy, TargetID: ids[1]})
	require.NoError(t, err)
	check("after a look")
}
