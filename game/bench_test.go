package game_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// MustPopulate registers n players alternating factions, each with a feed of
// a dozen lines, and returns a session of the first.
func MustPopulate(tb testing.TB, s *TestStore, n int) *game.Session {
	tb.Helper()
	ctx := context.Background()
	var first *game.Player
	for i := range n {
		p := MustRegister(tb, s, fmt.Sprintf("agent%02d", i), []game.Faction{game.FBI, game.MIB}[i%2])
		var notes []game.Note
		for j := range 12 {
			notes = append(notes, game.Note{PlayerID: p.ID, Text: fmt.Sprint("report ", j)})
		}
		require.NoError(tb, s.AddNotes(ctx, notes))
		if first == nil {
			first = p
		}
	}
	sess, err := s.CreateSession(ctx, first.ID)
	require.NoError(tb, err)
	return sess
}

// BenchmarkHQ is the store's share of the HQ page, the page the load test
// measures: SessionState (the player and the clock) and Events(15), with 20
// players; cached: while nothing is written, as a page shown again reads
// them; uncached: after a write each time (a logout of no session, not
// timed), as the first view after an action or a tick reads them.
func BenchmarkHQ(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	sess := MustPopulate(b, s, 20)
	hq := func(b *testing.B) {
		p, _, err := s.SessionState(ctx, sess.ID)
		if err != nil {
			b.Fatal(err)
		}
		if events, err := s.Events(ctx, p.ID, 15); err != nil || len(events) != 13 {
			b.Fatal(err, len(events))
		}
	}
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		defer testkit.ReportCPU(b)()
		for b.Loop() {
			hq(b)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			if err := s.DeleteSession(ctx, strings.Repeat("0", 32)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			hq(b)
		}
	})
}

// BenchmarkAct is one action (a board post: no AP needed), one write
// transaction. The fake clock moves one PostCooldown per post.
func BenchmarkAct(b *testing.B) {
	ctx := context.Background()
	s := MustOpenStore(b)
	p := MustRegister(b, s, "alice", game.FBI)
	b.ReportAllocs()
	defer testkit.ReportCPU(b)()
	for b.Loop() {
		s.Time.Add(game.PostCooldown)
		if _, err := s.Act(ctx, p.ID, game.Action{Kind: game.PostMessage, Body: "The truth is out there."}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTick is one tick of a game with n players.
func BenchmarkTick(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprintf("players=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40 })
			for i := range n {
				MustRegister(b, s, fmt.Sprintf("agent%03d", i), game.FBI)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Time.Add(Interval)
				if k, err := s.Tick(ctx); err != nil || k != 1 {
					b.Fatal(err, k)
				}
			}
		})
	}
}

// BenchmarkTickSeeded is one tick of a seeded world of 10,000 players
// (Store.Seed, with feeds, dossiers, news and board), as the live
// benchmark's: an ordinary tick and a payday (every PayTicks), which
// changes every player, in steps of DefaultPaySlice players
// (Store.TickStep). ns/op is the whole tick; longest-step-ms the longest
// step, the longest the loop is held by it.
func BenchmarkTickSeeded(b *testing.B) {
	const n = 10_000
	for _, payday := range []bool{false, true} {
		b.Run(fmt.Sprintf("players=%d/payday=%v", n, payday), func(b *testing.B) {
			ctx := context.Background()
			s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40 })
			_, err := s.Seed(ctx, n)
			require.NoError(b, err)
			b.ReportAllocs()
			var longest time.Duration // one step of TickStep: one turn of the loop
			for b.Loop() {
				b.StopTimer()
				for {
					s.Time.Add(Interval)
					c, err := s.Clock(ctx)
					require.NoError(b, err)
					if (c.Tick+1)%game.PayTicks == 0 == payday {
						break
					}
					_, err = s.Tick(ctx)
					require.NoError(b, err)
				}
				b.StartTimer()
				ticks := 0
				for more := true; more; {
					start := time.Now()
					var k int
					if k, more, err = s.TickStep(ctx); err != nil {
						b.Fatal(err)
					}
					ticks += k
					longest = max(longest, time.Since(start))
				}
				if ticks != 1 {
					b.Fatal("ticks applied:", ticks)
				}
			}
			b.ReportMetric(float64(longest.Microseconds())/1000, "longest-step-ms")
		})
	}
}

// BenchmarkTickHistory is an ordinary tick (no payday) of a seeded world
// of 10,000 players that have played a while: each gave some spy orders and
// was sent some messages (full: KeepReports and KeepMessages, as many as
// the tick keeps, 3 million rows), and between ticks 100 of them give an
// order and are sent a message. The rows are written straight into the
// tables, not timed.
func BenchmarkTickHistory(b *testing.B) {
	const n, active = 10_000, 100
	for _, c := range []struct {
		name              string
		reports, messages int // per player
	}{{"rows=30", 30, 30}, {"rows=full", game.KeepReports, game.KeepMessages}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40 })
			_, err := s.Seed(ctx, n)
			require.NoError(b, err)
			// add gives k reports as actor and m messages as recipient to
			// every player whose id is some modulo mod.
			add := func(k, m, mod, some int) {
				rows := `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?1)
					SELECT p.id AS id, p.id % ?2 + 1 AS other FROM k, players p WHERE p.id % ?3 = ?4 ORDER BY k.i, p.id`
				MustExec(b, s, `INSERT INTO reports (tick, at, kind, actor_id, actor_name, actor_faction, actor_agents,
					actor_security, target_id, target_name, target_faction, target_agents, target_security, defence,
					odds, attack_roll, defence_roll, success)
					SELECT 0, 0, 'spy', p.id, p.name, p.faction, p.agents, p.security, q.id, q.name, q.faction,
					q.agents, q.security, q.security, 0.5, 3, 4, 0
					FROM (`+rows+`) r JOIN players p ON p.id = r.id JOIN players q ON q.id = r.other`, k, n, mod, some)
				MustExec(b, s, `INSERT INTO messages (from_id, to_id, body, at)
					SELECT other, id, 'The truth is out there.', 0 FROM (`+rows+`)`, m, n, mod, some)
			}
			add(c.reports, c.messages, 1, 0)
			tick := func() {
				s.Time.Add(Interval)
				if k, err := s.Tick(ctx); err != nil || k != 1 {
					b.Fatal(err, k)
				}
			}
			tick() // the first prune since the rows came
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				b.StopTimer()
				for {
					if c, err := s.Clock(ctx); err != nil {
						b.Fatal(err)
					} else if (c.Tick+1)%game.PayTicks != 0 {
						break
					}
					tick() // not the payday
				}
				add(1, 1, n/active, i%(n/active))
				i++
				b.StartTimer()
				tick()
			}
		})
	}
}

// BenchmarkTickAtPace is an ordinary tick (no payday) of a seeded world
// of 10,000 players at make capacity's pace: every player gives an order
// every 60 s on average and a tick comes every 10 s, so between two ticks
// 1,666 players each give an order, which writes a report, a feed line
// for them and one for their target, and three live-page changes (the
// rows are written straight into the tables, not timed). It runs the tick
// step by step (Store.TickStep), as the server's loop does, and reports
// the longest step (longest-step-ms: the longest the loop is held by the
// tick) and the steps a tick took.
func BenchmarkTickAtPace(b *testing.B) {
	const n, active = 10_000, 1_666
	ctx := context.Background()
	s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40 })
	_, err := s.Seed(ctx, n)
	require.NoError(b, err)
	// orders writes what active players' orders write, the players whose
	// id is i modulo n/active acting on the next player.
	i := 0
	orders := func() {
		mod, some := n/active, i%(n/active)
		i++
		acting := `SELECT p.id AS id, p.id % ?1 + 1 AS other FROM players p WHERE p.id % ?2 = ?3`
		MustExec(b, s, `INSERT INTO reports (tick, at, kind, actor_id, actor_name, actor_faction, actor_agents,
			actor_security, target_id, target_name, target_faction, target_agents, target_security, defence,
			odds, attack_roll, defence_roll, success)
			SELECT 0, 0, 'spy', p.id, p.name, p.faction, p.agents, p.security, q.id, q.name, q.faction,
			q.agents, q.security, q.security, 0.5, 3, 4, 0
			FROM (`+acting+`) r JOIN players p ON p.id = r.id JOIN players q ON q.id = r.other`, n, mod, some)
		MustExec(b, s, `INSERT INTO events (tick, at, player_id, public, text)
			SELECT 0, 0, id, 0, 'Your agents report.' FROM (`+acting+`)
			UNION ALL SELECT 0, 0, other, 0, 'Spies were seen.' FROM (`+acting+`)`, n, mod, some)
		MustExec(b, s, `INSERT INTO changes (kind, player_id, alert, ref, at)
			SELECT 'feed', id, 0, 0, 0 FROM (`+acting+`) UNION ALL SELECT 'feed', other, 1, 0, 0 FROM (`+acting+`)
			UNION ALL SELECT 'player', NULL, 0, id, 0 FROM (`+acting+`)`, n, mod, some)
	}
	step := func() (more bool, d time.Duration) {
		start := time.Now()
		_, more, err := s.TickStep(ctx)
		require.NoError(b, err)
		return more, time.Since(start)
	}
	// A few ticks at the pace first, so that feeds, reports and changes
	// are as full as the tick keeps them.
	for range 2 * game.PayTicks {
		orders()
		s.Time.Add(Interval)
		for more := true; more; more, _ = step() {
		}
	}
	b.ReportAllocs()
	var longest time.Duration
	steps := 0
	for b.Loop() {
		b.StopTimer()
		for {
			orders()
			s.Time.Add(Interval)
			c, err := s.Clock(ctx)
			require.NoError(b, err)
			if (c.Tick+1)%game.PayTicks != 0 {
				break
			}
			for more := true; more; more, _ = step() { // the payday, untimed
			}
		}
		b.StartTimer()
		for more := true; more; {
			var d time.Duration
			more, d = step()
			longest = max(longest, d)
			steps++
		}
	}
	b.ReportMetric(float64(longest.Microseconds())/1000, "longest-step-ms")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/op")
}

// BenchmarkDossiersPage is the dossiers' first page (50 rows) of a seeded
// world of 2,000 players, read afresh (no read cache), when each of the
// page's targets was looked at by looks players of the viewer's faction
// and as many of the other: its cost should not grow with the looks
// (intel_target_latest: each row reads its target's newest looks first).
func BenchmarkDossiersPage(b *testing.B) {
	const n = 2_000
	for _, looks := range []int{0, 10, 300} {
		b.Run(fmt.Sprintf("looks=%d", looks), func(b *testing.B) {
			ctx := context.Background()
			s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40; o.NoReadCache = true })
			_, err := s.Seed(ctx, n)
			require.NoError(b, err)
			// The first 2*looks players by id (of both factions, as the seed
			// deals them) look at the first 60 by name, at ticks and times
			// of their own.
			MustExec(b, s, `INSERT OR REPLACE INTO intel (player_id, target_id, cash, agents, security, secrets, ap, tick, at)
				SELECT s.id, t.id, 1, 1, 1, 1, 1, s.id % 7, s.id FROM players s,
				(SELECT id FROM players ORDER BY name COLLATE NOCASE LIMIT 60) t
				WHERE s.id <= ?1 AND t.id != s.id`, 2*looks)
			viewer := int64(2*looks + 1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.DossiersPage(ctx, viewer, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDossiersPageBesideOrders is the dossiers' first page, through
// the read cache, of a seeded world of 2,000 players, viewed by one player
// after another (two factions in turn), while orders are given between
// the views as make capacity's players give them (not timed): every
// fourth view a spy order on a player of the page, every fourth a recruit
// by a player anywhere. The page's cost is what a view costs when most of
// what it shows did not change since another player's view.
func BenchmarkDossiersPageBesideOrders(b *testing.B) {
	const n = 2_000
	ctx := context.Background()
	s := MustOpenStore(b, func(o *game.Options) { o.RoundTicks = 1 << 40 })
	_, err := s.Seed(ctx, n)
	require.NoError(b, err)
	MustExec(b, s, `UPDATE players SET ap = 1000000, cash = 1000000000`)
	require.NoError(b, s.Sync(ctx))
	page, err := s.DossiersPage(ctx, 1, 1)
	require.NoError(b, err)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		viewer := int64(i%n + 1)
		if _, err := s.DossiersPage(ctx, viewer, 1); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		actor := int64((i*7919)%n + 1)
		switch i % 4 {
		case 1:
			// A target of the other faction on the page.
			for _, d := range page.Rows[i%len(page.Rows):] {
				a := MustPlayer(b, s, actor)
				if d.Target.Faction != a.Faction && d.Target.ID != actor {
					if _, err := s.Act(ctx, actor, game.Action{Kind: game.Spy, TargetID: d.Target.ID}); err != nil {
						b.Fatal(err)
					}
					break
				}
			}
		case 3:
			if _, err := s.Act(ctx, actor, game.Action{Kind: game.Recruit}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
}

// BenchmarkBcrypt is one password hash at bcrypt.DefaultCost, as Register
// does (and Authenticate's comparison costs the same): how long a login
// blocks the server's single-threaded loop.
func BenchmarkBcrypt(b *testing.B) {
	password := []byte("trustno1-trustno1")
	defer testkit.ReportCPU(b)()
	for b.Loop() {
		if _, err := bcrypt.GenerateFromPassword(password, bcrypt.DefaultCost); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/hash")
}
