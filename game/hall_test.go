package game_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// endRound moves the clock to the end of the round in progress and ticks.
func endRound(tb testing.TB, s *TestStore) {
	tb.Helper()
	ctx := context.Background()
	c, err := s.Clock(ctx)
	require.NoError(tb, err)
	s.Time.Add(time.Duration(c.RoundEnd()-c.Tick) * Interval)
	n, err := s.Tick(ctx)
	require.NoError(tb, err)
	require.EqualValues(tb, c.RoundEnd()-c.Tick, n)
}

func TestStore_HallOfFame(t *testing.T) {
	// Ensure a round's end keeps its final ranking in the hall of fame
	// (winner, winning faction, top ten), while the next round starts from
	// scratch, and that every past round stays there, the latest first.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	hall, err := s.HallOfFame(ctx)
	require.NoError(t, err)
	assert.Empty(t, hall, "no round has ended yet")

	var ids []int64
	for i := range 12 {
		f := game.FBI
		if i%3 == 0 {
			f = game.MIB
		}
		p := MustRegister(t, s, fmt.Sprintf("agent%02d", i), f)
		ids = append(ids, p.ID)
		// agent11 (FBI) leads with 11; no cash, which the round's last
		// auction would bid (game.LastAuctionCashPercent).
		require.NoError(t, s.SetSecrets(ctx, p.ID, i, 0))
	}
	endRound(t, s)
	require.NoError(t, s.SetSecrets(ctx, ids[0], 7, 0)) // round 2: agent00 (MIB) alone has Secrets
	endRound(t, s)

	hall, err = s.HallOfFame(ctx)
	require.NoError(t, err)
	require.Len(t, hall, 2)
	r2, r1 := hall[0], hall[1]
	assert.Equal(t, 1, r1.Round)
	assert.EqualValues(t, 10, r1.EndTick)
	assert.Equal(t, Epoch.Add(10*Interval), r1.EndedAt.UTC())
	require.Len(t, r1.Top, game.RoundTop, "the top ten of twelve")
	for i, p := range r1.Top {
		assert.Equal(t, i+1, p.Place)
		assert.Equal(t, fmt.Sprintf("agent%02d", 11-i), p.Name, "place %d", i+1)
		assert.Equal(t, 11-i, p.Secrets)
	}
	assert.Equal(t, ids[11], r1.Top[0].PlayerID)
	// FBI: 8 players holding 1+2+4+5+7+8+10+11 = 48; MIB: 4 holding 0+3+6+9 = 18.
	assert.Equal(t, game.FBI, r1.Winner)
	assert.Equal(t, []game.FactionTotal{{Faction: game.FBI, Players: 8, Secrets: 48}, {Faction: game.MIB, Players: 4, Secrets: 18}},
		r1.Factions)

	assert.Equal(t, 2, r2.Round)
	assert.Equal(t, game.MIB, r2.Winner)
	assert.Equal(t, "agent00", r2.Top[0].Name)
	assert.Equal(t, 7, r2.Top[0].Secrets)

	rk, err := s.Ranking(ctx)
	require.NoError(t, err)
	for _, p := range rk.Players {
		assert.Zero(t, p.Secrets, "round 3 starts from scratch: %s", p.Name)
	}
}

func TestStore_HallOfFame_FastForward(t *testing.T) {
	// Ensure a round cut short by downtime longer than a round is kept too.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	p := MustRegister(t, s, "mulder", game.FBI)
	require.NoError(t, s.SetSecrets(ctx, p.ID, 3, 0))
	s.Time.Add(25 * Interval)
	_, err := s.Tick(ctx)
	require.NoError(t, err)
	hall, err := s.HallOfFame(ctx)
	require.NoError(t, err)
	require.Len(t, hall, 1)
	assert.Equal(t, "mulder", hall[0].Top[0].Name)
	assert.EqualValues(t, 25, hall[0].EndTick)
}

func TestStore_Profile(t *testing.T) {
	// Ensure a profile shows what anyone may see: faction, joined, place,
	// rounds won (first places only), top-ten placings, and public posts
	// only (never the faction-only channel).
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	mulder := MustRegister(t, s, "Mulder", game.FBI)
	krycek := MustRegister(t, s, "krycek", game.MIB)
	require.NoError(t, s.SetSecrets(ctx, mulder.ID, 5, 0))
	endRound(t, s) // mulder wins round 1
	require.NoError(t, s.SetSecrets(ctx, krycek.ID, 5, 0))
	endRound(t, s) // krycek wins round 2, mulder second
	require.NoError(t, s.SetSecrets(ctx, mulder.ID, 1, 0))
	_, err := s.Act(ctx, mulder.ID, game.Action{Kind: game.PostMessage, Body: "The truth is out there."})
	require.NoError(t, err)
	s.Time.Add(game.PostCooldown)
	_, err = s.Act(ctx, mulder.ID, game.Action{Kind: game.PostMessage, Body: "FBI eyes only", FactionOnly: true})
	require.NoError(t, err)

	pr, err := s.Profile(ctx, "MULDER")
	require.NoError(t, err)
	assert.Equal(t, "Mulder", pr.Player.Name)
	assert.Equal(t, game.FBI, pr.Player.Faction)
	assert.Equal(t, Epoch, pr.Player.CreatedAt.UTC())
	assert.Equal(t, 1, pr.Place, "1 Secret against none")
	assert.Equal(t, 2, pr.Players)
	assert.Equal(t, 1, pr.RoundsWon)
	require.Len(t, pr.Placings, 2)
	assert.Equal(t, []int{2, 1}, []int{pr.Placings[0].Round, pr.Placings[1].Round}, "latest round first")
	assert.Equal(t, []int{2, 1}, []int{pr.Placings[0].Place, pr.Placings[1].Place})
	require.Len(t, pr.Posts, 1, "the faction-only post is not public history")
	assert.Equal(t, "The truth is out there.", pr.Posts[0].Body)
	assert.True(t, pr.Player.Acted)

	pr, err = s.Profile(ctx, "krycek")
	require.NoError(t, err)
	assert.Equal(t, 2, pr.Place)
	assert.Equal(t, 1, pr.RoundsWon)
	assert.False(t, pr.Player.Acted, "krycek has not acted")

	_, err = s.Profile(ctx, "scully")
	RequireCode(t, err, game.ENOTFOUND, `"scully"`)
}

func TestStore_Sessions_Capped(t *testing.T) {
	// Ensure a player keeps at most MaxSessions sessions: each login past
	// it ends the oldest, and DeleteSessions ends them all.
	ctx := context.Background()
	s := MustOpenStore(t)
	p := MustRegister(t, s, "mulder", game.FBI)
	other := MustRegister(t, s, "scully", game.FBI)
	theirs, err := s.CreateSession(ctx, other.ID)
	require.NoError(t, err)
	var ids []string
	for range game.MaxSessions + 3 {
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		ids = append(ids, sess.ID)
		s.Time.Add(time.Second) // each newer than the last
	}
	for i, id := range ids {
		_, err := s.SessionPlayer(ctx, id)
		if i < 3 {
			RequireCode(t, err, game.EUNAUTHORIZED, "")
		} else {
			assert.NoError(t, err, "session %d of %d is among the newest %d", i+1, len(ids), game.MaxSessions)
		}
	}
	assert.Equal(t, game.MaxSessions, MustCount(t, s, `SELECT count(*) FROM sessions WHERE player_id = ?`, p.ID))

	deleted, err := s.DeleteSessions(ctx, p.ID)
	require.NoError(t, err)
	assert.ElementsMatch(t, ids[3:], deleted)
	for _, id := range ids {
		_, err := s.SessionPlayer(ctx, id)
		RequireCode(t, err, game.EUNAUTHORIZED, "")
	}
	_, err = s.SessionPlayer(ctx, theirs.ID)
	assert.NoError(t, err, "another player's session survives")
}

func TestStore_MaxPlayers(t *testing.T) {
	// Ensure registration past Options.MaxPlayers is refused as the game
	// being full, enlisting nobody.
	s := MustOpenStore(t, func(o *game.Options) { o.MaxPlayers = 2 })
	MustRegister(t, s, "mulder", game.FBI)
	MustRegister(t, s, "scully", game.FBI)
	_, err := s.Register(context.Background(), "krycek", "password1", game.MIB)
	RequireCode(t, err, game.ECONFLICT, "The game is full")
	assert.Equal(t, 2, MustCount(t, s, `SELECT count(*) FROM players`))
}

func TestValidateAccount_EveryProblem(t *testing.T) {
	// Ensure registration names every problem at once, in form order.
	for _, tc := range []struct {
		name, password, faction string
		want                    []string
	}{
		{"mulder", "password1", "FBI", nil},
		{"x", "password1", "FBI", []string{"A name needs 3 to 20 characters"}},
		{"x", "short", "CIA", []string{"A name needs 3 to 20", "A password needs 8 to 72 bytes", `Unknown faction "CIA"`}},
		{"bad name", "short", "mib", []string{"may hold only letters", "A password needs"}},
	} {
		err := game.ValidateAccount(tc.name, tc.password, tc.faction)
		if tc.want == nil {
			assert.NoError(t, err, tc.name)
			continue
		}
		RequireCode(t, err, game.EINVALID, "")
		msg, at := game.ErrorMessage(err), 0
		for _, w := range tc.want {
			i := strings.Index(msg[at:], w)
			require.GreaterOrEqual(t, i, 0, "%q in %q after %d", w, msg, at)
			at += i
		}
	}
}

func TestRoundResult_Champion(t *testing.T) {
	for _, tc := range []struct {
		name string
		top  []game.Placing
		want string // "" for no champion
	}{
		{"Nobody", nil, ""},
		{"NoSecrets", []game.Placing{{Place: 1, Name: "fox", Cash: 500}, {Place: 2, Name: "dana", Cash: 400}}, ""},
		{"Level", []game.Placing{{Place: 1, Name: "fox", Secrets: 2, Cash: 5}, {Place: 1, Name: "dana", Secrets: 2, Cash: 5}}, ""},
		// Cash is private (a dossier's), so it breaks no tie either.
		{"CashDecidesNothing", []game.Placing{{Place: 1, Name: "dana", Secrets: 2, Cash: 5}, {Place: 1, Name: "fox", Secrets: 2, Cash: 6}}, ""},
		// Level on Secrets, but fox bought one at the last auction (Rank).
		{"LastLotDecides", []game.Placing{{Place: 1, Name: "fox", Secrets: 2}, {Place: 2, Name: "dana", Secrets: 2}}, "fox"},
		{"MoreSecrets", []game.Placing{{Place: 1, Name: "fox", Secrets: 3}, {Place: 2, Name: "dana", Secrets: 2, Cash: 900}}, "fox"},
		{"Alone", []game.Placing{{Place: 1, Name: "fox", Secrets: 1}}, "fox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a round is won only by one agent holding the most Secrets , never by the alphabet or by cash.
			r := game.RoundResult{Top: tc.top}
			c, ok := r.Champion()
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, c.Name)
		})
	}
}

func TestStore_Profile_DrawWinsNothing(t *testing.T) {
	// Ensure a round that ends with everyone level counts as won by nobody.
	// A short round, and no cash: the round's last auction would bid a
	// few days' pay, and sell one of them a Secret.
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	a := MustRegister(t, s, "aaron", game.FBI)
	z := MustRegister(t, s, "zelda", game.MIB)
	for _, id := range []int64{a.ID, z.ID} {
		require.NoError(t, s.SetSecrets(context.Background(), id, 0, 0))
	}
	endRound(t, s)
	pr, err := s.Profile(context.Background(), a.Name)
	require.NoError(t, err)
	require.NotEmpty(t, pr.Placings)
	assert.Equal(t, 1, pr.Placings[0].Place, "joint first")
	assert.Zero(t, pr.RoundsWon, "but not the winner of a level round")
}

func TestStore_LastLotBreaksTie(t *testing.T) {
	// Ensure the store keeps who bought at the round's last auction and
	// the round's end places them ahead of a player level on Secrets:
	// zelda, three behind aaron, buys the last auction's lot of three (a
	// short round: it is the mid-week auction too) with her cash, and
	// wins the round level with him.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	a := MustRegister(t, s, "aaron", game.FBI)
	z := MustRegister(t, s, "zelda", game.MIB)
	require.NoError(t, s.SetSecrets(ctx, a.ID, 5, 0))
	require.NoError(t, s.SetSecrets(ctx, z.ID, 2, 5000))
	s.Time.Add(9 * Interval) // tick 9: the round's last auction
	_, err := s.Tick(ctx)
	require.NoError(t, err)
	rk, err := s.Ranking(ctx)
	require.NoError(t, err)
	require.Len(t, rk.Players, 2)
	assert.Equal(t, []string{"zelda", "aaron"}, []string{rk.Players[0].Name, rk.Players[1].Name})
	assert.Equal(t, []int{5, 5}, []int{rk.Players[0].Secrets, rk.Players[1].Secrets})
	assert.True(t, rk.Players[0].LastLot)
	assert.Equal(t, []int{1, 2}, rk.Places)
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	hall, err := s.HallOfFame(ctx)
	require.NoError(t, err)
	require.Len(t, hall, 1)
	champ, ok := hall[0].Champion()
	require.True(t, ok)
	assert.Equal(t, "zelda", champ.Name)
	assert.Equal(t, 2, hall[0].Top[1].Place, "aaron, level on Secrets, second")
	pz, err := s.Profile(ctx, z.Name)
	require.NoError(t, err)
	assert.Equal(t, 1, pz.RoundsWon)
	assert.False(t, pz.Player.LastLot, "a new round clears it")
	pa, err := s.Profile(ctx, a.Name)
	require.NoError(t, err)
	assert.Zero(t, pa.RoundsWon)
	assert.Equal(t, 2, pa.Placings[0].Place)
}

func TestStore_Careers(t *testing.T) {
	// Ensure a career outlasts two rounds in the store: rounds played,
	// wins, best place and medals, and the hall lists careers best first.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 5 })
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	MustRegister(t, s, "carol", game.FBI)
	for round := range 2 {
		require.NoError(t, s.SetSecrets(ctx, a.ID, 3-round, 0))
		require.NoError(t, s.SetSecrets(ctx, b.ID, 2+round, 0))
		s.Time.Add(5 * Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
	}
	pa, pb := MustPlayer(t, s, a.ID), MustPlayer(t, s, b.ID)
	assert.Equal(t, game.Career{Rounds: 2, Wins: 1, BestPlace: 1, Gold: 1, Silver: 1}, pa.Career)
	assert.Equal(t, game.Career{Rounds: 2, Wins: 1, BestPlace: 1, Gold: 1, Silver: 1}, pb.Career)
	careers, err := s.Careers(ctx, 10)
	require.NoError(t, err)
	require.Len(t, careers, 3)
	assert.Equal(t, []string{"alice", "bob", "carol"}, []string{careers[0].Name, careers[1].Name, careers[2].Name})
	assert.Equal(t, game.Career{Rounds: 2, BestPlace: 3}, careers[2].Career, "no Secret: no medal")
	pr, err := s.Profile(ctx, "bob")
	require.NoError(t, err)
	assert.Equal(t, pb.Career, pr.Player.Career)
}

func TestStore_HallOfFame_Ties(t *testing.T) {
	// Ensure the hall of fame never places by name: players level on
	// Secrets share a place, the top RoundTop places are kept, and of
	// players level at the last of them those who enlisted first (zulu,
	// then yankee, before alpha); the profile shows the shared place, and
	// careers level on every count share a rank.
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	for i, name := range []string{"zulu", "yankee", "xray", "whiskey", "victor", "uniform", "tango", "sierra", "romeo", "alpha", "bravo"} {
		p := MustRegister(t, s, name, []game.Faction{game.FBI, game.MIB}[i%2])
		secrets := 20 - i // distinct places 3..9 for xray..romeo
		switch name {
		case "zulu", "yankee":
			secrets = 30 // joint first
		case "romeo", "alpha", "bravo":
			secrets = 1 // joint 9th, one too many for the hall
		}
		require.NoError(t, s.SetSecrets(ctx, p.ID, secrets, 0)) // no cash for the round's last auction to bid
	}
	pr, err := s.Profile(ctx, "yankee")
	require.NoError(t, err)
	assert.Equal(t, 1, pr.Place, "level with zulu: joint first")
	pr, err = s.Profile(ctx, "bravo")
	require.NoError(t, err)
	assert.Equal(t, 9, pr.Place)
	endRound(t, s)

	hall, err := s.HallOfFame(ctx)
	require.NoError(t, err)
	require.Len(t, hall, 1)
	var top []string
	for _, p := range hall[0].Top {
		top = append(top, fmt.Sprint(p.Place, " ", p.Name))
	}
	assert.Equal(t, []string{"1 zulu", "1 yankee", "3 xray", "4 whiskey", "5 victor", "6 uniform", "7 tango", "8 sierra",
		"9 romeo", "9 alpha"}, top)
	_, won := hall[0].Champion()
	assert.False(t, won, "level first places: nobody won")

	careers, err := s.Careers(ctx, 3)
	require.NoError(t, err)
	require.Len(t, careers, 3)
	assert.Equal(t, []string{"zulu", "yankee", "xray"}, []string{careers[0].Name, careers[1].Name, careers[2].Name})
	assert.Equal(t, []int{1, 1, 3}, game.CareerRanks(careers))
}
