package game_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Tick(t *testing.T) {
	ctx := context.Background()
	t.Run("ProtectionEndsOffPayday", func(t *testing.T) {
		// Ensure a tick with no payday, which loads only the players whose
		// protection ends in it, still tells them, once.
		s := MustOpenStore(t)
		s.Time.Add(Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		p := MustRegister(t, s, "bob", game.MIB) // protected until tick 1+NewPlayerProtection, no payday
		require.NotZero(t, (1+game.NewPlayerProtection)%game.PayTicks)
		for range game.NewPlayerProtection + 2 {
			s.Time.Add(Interval)
			_, err := s.Tick(ctx)
			require.NoError(t, err)
		}
		events, err := s.Events(ctx, p.ID, game.KeepFeed)
		require.NoError(t, err)
		var ended []int64
		for _, e := range events {
			if strings.Contains(e.Text, "protection from theft has ended") {
				ended = append(ended, e.Tick)
			}
		}
		assert.Equal(t, []int64{1 + game.NewPlayerProtection}, ended)
	})
	t.Run("PaydayInSlices", func(t *testing.T) {
		// Ensure a payday paid in slices (PaySlice 2, five players) leaves
		// every player, feed and the clock as the same payday paid at once,
		// that the clock moves only with the last step, and that steps cut
		// short by a restart go on where they stopped.
		setUp := func(slice int) *TestStore {
			s := MustOpenStore(t, func(o *game.Options) { o.PaySlice = slice })
			for i, name := range []string{"alice", "bob", "carol", "dave", "erin"} {
				p := MustRegister(t, s, name, []game.Faction{game.FBI, game.MIB}[i%2])
				require.NoError(t, s.SetSecrets(ctx, p.ID, 3*i, 100*i)) // the lead differs: catch-up pay too
			}
			// carol cannot pay her agents: one walks out, a feed line.
			MustExec(t, s, `UPDATE players SET agents = 100, cash = 0 WHERE name = 'carol'`)
			require.NoError(t, s.Sync(ctx))
			s.Time.Add((game.PayTicks - 1) * Interval)
			n, err := s.Tick(ctx)
			require.NoError(t, err)
			require.Equal(t, game.PayTicks-1, n)
			s.Time.Add(Interval) // the payday is due
			return s
		}
		steps := func(s *TestStore, max int) (taken, ticks int) {
			for taken < max {
				n, more, err := s.TickStep(ctx)
				require.NoError(t, err)
				taken, ticks = taken+1, ticks+n
				if !more {
					break
				}
			}
			return taken, ticks
		}
		same := func(want, got *TestStore) {
			t.Helper()
			for id := int64(1); id <= 5; id++ {
				assert.Equal(t, MustPlayer(t, want, id), MustPlayer(t, got, id), "player %d", id)
				we, err := want.Events(ctx, id, game.KeepFeed)
				require.NoError(t, err)
				ge, err := got.Events(ctx, id, game.KeepFeed)
				require.NoError(t, err)
				assert.Equal(t, Texts(we), Texts(ge), "player %d's feed", id)
			}
			wc, err := want.Clock(ctx)
			require.NoError(t, err)
			gc, err := got.Clock(ctx)
			require.NoError(t, err)
			assert.Equal(t, wc, gc)
		}

		once := setUp(0)
		taken, ticks := steps(once, 10)
		require.Equal(t, [2]int{3, 1}, [2]int{taken, ticks}, "five players, the default slice: one step, then the prune's two")
		carol, err := once.Events(ctx, 3, game.KeepFeed)
		require.NoError(t, err)
		require.Contains(t, Texts(carol), "Unpaid, one of your agents walked out.")

		sliced := setUp(2)
		taken, ticks = steps(sliced, 1)
		require.Equal(t, [2]int{1, 0}, [2]int{taken, ticks}, "the first slice moves no clock")
		c, err := sliced.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(game.PayTicks-1), c.Tick)
		assert.Equal(t, MustPlayer(t, once, 1).AP, MustPlayer(t, sliced, 1).AP, "alice is paid")
		assert.Less(t, MustPlayer(t, sliced, 5).AP, MustPlayer(t, once, 5).AP, "erin is not yet")
		taken, ticks = steps(sliced, 10)
		assert.Equal(t, [2]int{5, 1}, [2]int{taken, ticks}, "two more slices, then the rest of the tick, then its prune")
		same(once, sliced)

		restarted := setUp(2)
		steps(restarted, 2)
		restarted.MustReopen(t) // Open applies what is due: the rest of the payday
		same(once, restarted)
		taken, ticks = steps(restarted, 10)
		assert.Equal(t, [2]int{1, 0}, [2]int{taken, ticks}, "nothing left due")
	})
	t.Run("CatchUp", func(t *testing.T) {
		// Ensure missed intervals apply that many ticks once (their paydays
		// included), and calling again applies none.
		const missed = 2*game.PayTicks + 1 // two paydays
		s := MustOpenStore(t)
		p := MustRegister(t, s, "alice", game.FBI)
		s.Time.Add(missed * Interval)
		n, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, missed, n)
		n, err = s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 0, n)

		got := MustPlayer(t, s, p.ID)
		assert.Equal(t, game.StartAP+2*game.APPerPay, got.AP)
		assert.Equal(t, game.StartCash+2*game.NewPlayer("x", game.FBI, 0).Income(), got.Cash)
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(missed), c.Tick)
		assert.True(t, c.LastTick.Equal(Epoch.Add(missed*Interval)), "last tick %v", c.LastTick)
		assert.True(t, c.NextTick().Equal(Epoch.Add((missed+1)*Interval)))
	})
	t.Run("ErrCanceled", func(t *testing.T) {
		// Ensure a tick that fails applies nothing and says so, and the next call catches up.
		s := MustOpenStore(t)
		s.Time.Add(2 * Interval)
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		n, err := s.Tick(canceled)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, game.EINTERNAL, game.ErrorCode(err))
		assert.Equal(t, 0, n)
		n, err = s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
	})
	t.Run("KeepsCadence", func(t *testing.T) {
		// Ensure a late timer does not shift the schedule: ticks stay on Epoch + k x Interval.
		s := MustOpenStore(t)
		s.Time.Add(Interval*4 + Interval/2)
		n, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 4, n)
		s.Time.Add(Interval / 2)
		n, err = s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.True(t, c.LastTick.Equal(Epoch.Add(5*Interval)))
	})
	t.Run("NotDue", func(t *testing.T) {
		// Ensure nothing happens before a whole interval, or if the clock goes back.
		s := MustOpenStore(t)
		for _, d := range []time.Duration{Interval - time.Nanosecond, -time.Hour} {
			s.Time.Add(d)
			n, err := s.Tick(ctx)
			require.NoError(t, err)
			assert.Equal(t, 0, n)
		}
	})
	t.Run("OpenCatchesUp", func(t *testing.T) {
		// Ensure Open applies the ticks missed while the server was down.
		s := MustOpenStore(t)
		s.MustClose(t)
		s.Time.Add(3 * Interval)
		s.MustReopen(t)
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), c.Tick)
	})
	t.Run("TwoStores", func(t *testing.T) {
		// Ensure two stores on one file (two processes sharing it) never apply a tick twice.
		s := MustOpenStore(t)
		opt := s.Options
		opt.Rand = rand.New(rand.NewPCG(3, 4))
		other, err := game.Open(s.Path, opt)
		require.NoError(t, err)
		defer other.Close()
		s.Time.Add(5 * Interval)
		var wg sync.WaitGroup
		counts := make([]int, 8)
		for i := range counts {
			store := []*game.Store{s.Store, other}[i%2]
			wg.Go(func() {
				n, err := store.Tick(ctx)
				assert.NoError(t, err)
				counts[i] = n
			})
		}
		wg.Wait()
		sum := 0
		for _, n := range counts {
			sum += n
		}
		assert.Equal(t, 5, sum)
		c, err := other.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(5), c.Tick)
	})
	t.Run("RoundEnd", func(t *testing.T) {
		// Ensure a round ends after RoundTicks with its ranking in the news,
		// each player's place on their wire as an alert, stats reset,
		// dossiers cleared.
		s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 3 })
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		src := MustSource(t, s, "Late-Night Radio Host")
		_, err := s.Act(ctx, a.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
		spyUntilKnown(t, s, b.ID, a.ID)
		start, err := s.LastChange(ctx)
		require.NoError(t, err)

		s.Time.Add(3 * Interval)
		n, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, game.Clock{Tick: 3, Round: 2, RoundStart: 3, RoundTicks: 3, LastTick: c.LastTick, Interval: Interval}, c)
		news, err := s.News(ctx, 2)
		require.NoError(t, err)
		assert.Contains(t, news[1].Text, "Round 1 is over. 1. alice (FBI) with 1 Secret")
		assert.Contains(t, news[1].Text, "The FBI wins the round.")
		assert.Contains(t, news[0].Text, "Round 2 begins")
		assert.True(t, news[0].At.Equal(Epoch.Add(3*Interval)), "dated when the tick was due")
		got := MustPlayer(t, s, a.ID)
		assert.Equal(t, [3]int{0, game.StartCash, game.StartAP}, [3]int{got.Secrets, got.Cash, got.AP})
		assert.Equal(t, src.Price, MustSource(t, s, src.Name).Price)
		ds, err := s.Dossiers(ctx, b.ID)
		require.NoError(t, err)
		assert.False(t, ds[0].Known)

		changes, _, err := s.ChangesSince(ctx, start, 100)
		require.NoError(t, err)
		places := map[int64]string{}
		for _, c := range changes {
			if c.Kind == game.ChangeFeed && strings.HasPrefix(c.Event.Text, "Round 1 is over") {
				assert.True(t, c.Alert, "the round's end is an alert on %d's open pages", c.PlayerID)
				places[c.PlayerID] = c.Event.Text
			}
		}
		assert.Contains(t, places[a.ID], "Round 1 is over: you placed 1st of 2, with 1 Secret")
		assert.Contains(t, places[b.ID], "Round 1 is over: you placed 2nd of 2, with 0 Secrets")
	})
	t.Run("FastForward", func(t *testing.T) {
		// Ensure more than a round of downtime ends the round once instead of replaying every tick.
		s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
		MustRegister(t, s, "alice", game.FBI)
		s.Time.Add(25 * Interval)
		n, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 25, n)
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, [3]int64{25, 2, 25}, [3]int64{c.Tick, int64(c.Round), c.RoundStart})
		news, err := s.News(ctx, 3)
		require.NoError(t, err)
		assert.Equal(t, "The wires were cut for 25 ticks; round 1 ends early and the game resumes at tick 25.", news[2].Text)
	})
	t.Run("Expiry", func(t *testing.T) {
		// Ensure a tick keeps the last KeepNews news lines, KeepFeed feed lines, and no expired session.
		s := MustOpenStore(t)
		p := MustRegister(t, s, "alice", game.FBI)
		other := MustRegister(t, s, "bob", game.MIB)
		var notes []game.Note
		for i := range game.KeepNews + 5 {
			notes = append(notes, game.Note{Text: fmt.Sprint("news ", i)})
		}
		for i := range game.KeepFeed + 5 {
			notes = append(notes, game.Note{PlayerID: p.ID, Text: fmt.Sprint("feed ", i)})
		}
		require.NoError(t, s.AddNotes(ctx, notes))
		sess, err := s.CreateSession(ctx, p.ID)
		require.NoError(t, err)
		s.Time.Add(time.Hour)
		_, err = s.Tick(ctx)
		require.NoError(t, err)

		news, err := s.News(ctx, 1000)
		require.NoError(t, err)
		assert.Len(t, news, game.KeepNews)
		assert.Equal(t, fmt.Sprint("news ", game.KeepNews+4), news[0].Text)
		feed, err := s.Events(ctx, p.ID, 1000)
		require.NoError(t, err)
		assert.Len(t, feed, game.KeepFeed)
		assert.Equal(t, fmt.Sprint("feed ", game.KeepFeed+4), feed[1].Text, "after the protection line")
		kept, err := s.Events(ctx, other.ID, 1000)
		require.NoError(t, err)
		assert.Len(t, kept, 2, "other feeds keep their welcome and protection lines")
		assert.Equal(t, 0, MustCount(t, s, `SELECT count(*) FROM sessions WHERE id = ?`, sess.ID))

		// The next tick prunes only the feeds that grew since, and them
		// as well.
		notes = notes[:0]
		for i := range 7 {
			notes = append(notes, game.Note{PlayerID: p.ID, Text: fmt.Sprint("later ", i)})
		}
		require.NoError(t, s.AddNotes(ctx, notes))
		s.Time.Add(time.Hour)
		_, err = s.Tick(ctx)
		require.NoError(t, err)
		feed, err = s.Events(ctx, p.ID, 1000)
		require.NoError(t, err)
		assert.Len(t, feed, game.KeepFeed, "pruned again")
		texts := make([]string, len(feed))
		for i, e := range feed {
			texts[i] = e.Text
		}
		assert.Contains(t, texts, "later 6")
		assert.NotContains(t, texts, "feed 10", "the older lines went first")
	})
	t.Run("PrunesReportsAndMessages", func(t *testing.T) {
		// Ensure each tick leaves every actor its newest KeepReports reports
		// and every recipient its newest KeepMessages messages from each
		// writer, and the rows of the others untouched: at the first prune,
		// for rows added after one, across a restart, and on a tick with
		// nothing new.
		s := MustOpenStore(t)
		var ids []int64
		for i, name := range []string{"alice", "bob", "carol", "dave"} {
			ids = append(ids, MustRegister(t, s, name, []game.Faction{game.FBI, game.MIB}[i%2]).ID)
		}
		a, b, c, d := ids[0], ids[1], ids[2], ids[3]
		for _, key := range []string{"reports_pruned", "messages_pruned"} {
			_, ok := mustKV(t, s.Path, key)
			require.False(t, ok, "no prune yet: the first ranks every group")
		}
		type history struct {
			table, group string // group: an SQL expression
			keep         int
		}
		histories := []history{{"reports", "actor_id", game.KeepReports}, {"messages", "to_id * 1000 + from_id", game.KeepMessages}}
		rows := func(h history) map[int64][]int64 { // the ids of each group, oldest first
			t.Helper()
			db, err := sql.Open("sqlite", game.DSN(s.Path))
			require.NoError(t, err)
			defer db.Close()
			rs, err := db.Query(`SELECT ` + h.group + `, id FROM ` + h.table + ` ORDER BY id`)
			require.NoError(t, err)
			defer rs.Close()
			groups := map[int64][]int64{}
			for rs.Next() {
				var g, id int64
				require.NoError(t, rs.Scan(&g, &id))
				groups[g] = append(groups[g], id)
			}
			require.NoError(t, rs.Err())
			return groups
		}
		step := func(name string, add func()) {
			t.Helper()
			add()
			var before []map[int64][]int64
			for _, h := range histories {
				before = append(before, rows(h))
			}
			s.Time.Add(Interval)
			n, err := s.Tick(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			for i, h := range histories {
				want := map[int64][]int64{}
				for g, ids := range before[i] {
					want[g] = ids[max(0, len(ids)-h.keep):]
				}
				assert.Equal(t, want, rows(h), "%s: %s", name, h.table)
				mark, ok := mustKV(t, s.Path, h.table+"_pruned")
				assert.True(t, ok, "%s: %s", name, h.table)
				assert.Equal(t, MustCount(t, s, `SELECT max(id) FROM `+h.table), int(mark), "%s: %s", name, h.table)
			}
			// The messages pruned were unread: the masthead's count
			// loses them.
			for _, id := range ids {
				assert.Equal(t, MustCount(t, s, `SELECT count(*) FROM messages WHERE to_id = ? AND read = 0`, id),
					MustCount(t, s, `SELECT unread_messages FROM players WHERE id = ?`, id), "%s: player %d", name, id)
			}
		}

		step("first prune", func() {
			require.NoError(t, s.AddReports(ctx, a, b, game.KeepReports+30))
			require.NoError(t, s.AddReports(ctx, b, a, game.KeepReports-10))
			require.NoError(t, s.AddReports(ctx, c, d, game.KeepReports))
			for range 5 { // 350 to bob, from two players in turn
				require.NoError(t, s.AddMessages(ctx, a, b, 50))
				require.NoError(t, s.AddMessages(ctx, c, b, 20))
			}
			require.NoError(t, s.AddMessages(ctx, b, a, game.KeepMessages-1))
			require.NoError(t, s.AddMessages(ctx, a, d, game.KeepMessages))
		})
		require.Equal(t, game.KeepReports, MustCount(t, s, `SELECT count(*) FROM reports WHERE actor_id = ?`, a))
		require.Equal(t, game.KeepMessages, MustCount(t, s, `SELECT count(*) FROM messages WHERE to_id = ? AND from_id = ?`, b, a))
		require.Equal(t, 100, MustCount(t, s, `SELECT count(*) FROM messages WHERE to_id = ? AND from_id = ?`, b, c),
			"what another writer wrote stays")

		step("rows after a prune", func() {
			require.NoError(t, s.AddReports(ctx, a, c, 5))
			require.NoError(t, s.AddReports(ctx, b, c, 20))  // 90 + 20
			require.NoError(t, s.AddReports(ctx, d, a, 3))   // a new actor
			require.NoError(t, s.AddMessages(ctx, b, a, 10)) // 199 + 10
			require.NoError(t, s.AddMessages(ctx, d, b, 1))
		})
		step("rows before a restart", func() {
			require.NoError(t, s.AddReports(ctx, a, d, 1))
			require.NoError(t, s.AddReports(ctx, c, a, 2))
			require.NoError(t, s.AddMessages(ctx, b, d, 3))
			s.MustReopen(t)
		})
		step("after a restart", func() {
			require.NoError(t, s.AddReports(ctx, d, b, game.KeepReports))
			require.NoError(t, s.AddMessages(ctx, a, c, game.KeepMessages+1))
		})
		step("nothing new", func() {})
		assert.Equal(t, 4*game.KeepReports, MustCount(t, s, `SELECT count(*) FROM reports`), "every actor at the limit")
	})
	t.Run("PrunesPosts", func(t *testing.T) {
		// Ensure a tick keeps exactly the newest KeepPosts board posts.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		b := MustRegister(t, s, "bob", game.MIB)
		var bodies []string
		for i := range game.KeepPosts + 50 {
			bodies = append(bodies, fmt.Sprint("post ", i))
		}
		require.NoError(t, s.AddPosts(ctx, a.ID, bodies[:100]))
		require.NoError(t, s.AddPosts(ctx, b.ID, bodies[100:]))
		s.Time.Add(Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)

		posts, err := s.Posts(ctx, "", 1000)
		require.NoError(t, err)
		require.Len(t, posts, game.KeepPosts)
		assert.Equal(t, fmt.Sprint("post ", game.KeepPosts+49), posts[0].Body)
		assert.Equal(t, "post 50", posts[game.KeepPosts-1].Body)
		assert.Equal(t, game.KeepPosts, MustCount(t, s, `SELECT count(*) FROM posts`))
	})
	t.Run("KeepsFewPosts", func(t *testing.T) {
		// Ensure a board with fewer than KeepPosts posts loses none to a tick.
		s := MustOpenStore(t)
		a := MustRegister(t, s, "alice", game.FBI)
		require.NoError(t, s.AddPosts(ctx, a.ID, []string{"one", "two"}))
		s.Time.Add(Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, MustCount(t, s, `SELECT count(*) FROM posts`))
	})
}

// spyUntilKnown has spy spy on target until the dossier is filled.
func spyUntilKnown(tb testing.TB, s *TestStore, spy, target int64) {
	tb.Helper()
	for range 10 {
		out, err := s.Act(context.Background(), spy, game.Action{Kind: game.Spy, TargetID: target})
		require.NoError(tb, err)
		if strings.Contains(out.Text, "went through") {
			return
		}
	}
	require.FailNow(tb, "ten spy attempts all failed")
}

func TestStore_TickStepPrune(t *testing.T) {
	ctx := context.Background()
	const players, slice = 7, 2
	// setUp opens a store that prunes slice players a step, its players'
	// feeds past KeepFeed and their reports past KeepReports, and makes
	// the next tick due; feed(i) is player i's feed, newest first.
	setUp := func(t *testing.T) (s *TestStore, ids []int64, feed func(i int) []string) {
		s = MustOpenStore(t, func(o *game.Options) { o.PruneSlice = slice })
		for i := range players {
			ids = append(ids, MustRegister(t, s, fmt.Sprintf("agent%d", i), []game.Faction{game.FBI, game.MIB}[i%2]).ID)
		}
		// The first prune of a database ranks every group at once: a tick
		// before the rows, so that the next prunes the groups that grew.
		s.Time.Add(Interval)
		_, err := s.Tick(ctx)
		require.NoError(t, err)
		for _, id := range ids {
			p := &game.Player{ID: id}
			var notes []game.Note
			for j := range game.KeepFeed + 5 {
				notes = append(notes, game.Note{PlayerID: p.ID, Text: fmt.Sprintf("feed %d", j)})
			}
			require.NoError(t, s.AddNotes(ctx, notes))
			require.NoError(t, s.AddReports(ctx, p.ID, ids[0], game.KeepReports+3))
		}
		s.Time.Add(Interval)
		_, ok := mustKV(t, s.Path, "feed_pruned")
		require.True(t, ok, "pruned once")
		feed = func(i int) []string {
			events, err := s.Events(ctx, ids[i], 1000)
			require.NoError(t, err)
			return Texts(events)
		}
		return s, ids, feed
	}
	addLine := func(t *testing.T, s *TestStore, id int64, text string) {
		require.NoError(t, s.AddNotes(ctx, []game.Note{{PlayerID: id, Text: text}}))
	}
	pruned := func(t *testing.T, s *TestStore, ids []int64) {
		t.Helper()
		_, ok := mustKV(t, s.Path, "prune_history")
		assert.False(t, ok, "no prune under way")
		for _, id := range ids {
			assert.Equal(t, game.KeepReports, MustCount(t, s, `SELECT count(*) FROM reports WHERE actor_id = ?`, id),
				"player %d's reports", id)
		}
	}

	t.Run("InSteps", func(t *testing.T) {
		// Ensure a tick's prune runs in steps of its own after the tick's,
		// PruneSlice players each: the first step applies the whole tick
		// (the clock, its change), and the reads between the steps see it;
		// at the end every feed and every actor's reports hold what the
		// tick keeps, the newest.
		s, ids, feed := setUp(t)
		last, err := s.LastChange(ctx)
		require.NoError(t, err)
		n, more, err := s.TickStep(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.True(t, more, "the prune is left for the next steps")
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), c.Tick, "the tick is applied")
		changes, _, err := s.ChangesSince(ctx, last, 100)
		require.NoError(t, err)
		require.NotEmpty(t, changes)
		assert.Equal(t, game.ChangeTick, changes[len(changes)-1].Kind, "the tick's change is out")
		assert.Len(t, feed(players-1), game.KeepFeed+5+1, "not pruned yet (and the welcome line)")

		steps := 0
		for more {
			n, more, err = s.TickStep(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
			steps++
			c, err := s.Clock(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(2), c.Tick)
		}
		assert.GreaterOrEqual(t, steps, 1+players/slice, "the rows past the keeps, then the feeds a slice a step")
		for i := range players {
			f := feed(i)
			assert.Len(t, f, game.KeepFeed, "player %d", i)
			assert.Equal(t, fmt.Sprint("feed ", game.KeepFeed+4), f[0], "player %d: the newest stay", i)
		}
		pruned(t, s, ids)
	})
	t.Run("OrdersBetweenSteps", func(t *testing.T) {
		// Ensure lines written between the prune's steps are kept, in a
		// feed pruned before them or after: the prune keeps each feed's
		// newest KeepFeed lines, and leaves those newer than its start to
		// the next tick's.
		s, ids, feed := setUp(t)
		_, more, err := s.TickStep(ctx)
		require.NoError(t, err)
		for range 2 { // the rows past the keeps, then the first players' feeds
			_, more, err = s.TickStep(ctx)
			require.NoError(t, err)
			require.True(t, more)
		}
		require.Len(t, feed(0), game.KeepFeed, "pruned")
		require.Greater(t, len(feed(players-1)), game.KeepFeed, "not pruned yet")
		addLine(t, s, ids[0], "after its prune")
		addLine(t, s, ids[players-1], "before its prune")
		for more {
			_, more, err = s.TickStep(ctx)
			require.NoError(t, err)
		}
		f := feed(0)
		assert.Len(t, f, game.KeepFeed+1, "the line after the prune is the next tick's to prune")
		assert.Equal(t, "after its prune", f[0])
		f = feed(players - 1)
		assert.Len(t, f, game.KeepFeed)
		assert.Equal(t, "before its prune", f[0])
		s.Time.Add(Interval)
		_, err = s.Tick(ctx)
		require.NoError(t, err)
		assert.Len(t, feed(0), game.KeepFeed, "the next tick")
		assert.Equal(t, "after its prune", feed(0)[0])
	})
	t.Run("TickDueMidPrune", func(t *testing.T) {
		// Ensure a tick falling due while a prune is under way waits for
		// it: the prune ends, then the tick is applied and pruned.
		s, ids, feed := setUp(t)
		var more bool
		for range 2 { // the tick, then the rows past the keeps
			_, m, err := s.TickStep(ctx)
			require.NoError(t, err)
			more = m
		}
		require.True(t, more)
		s.Time.Add(Interval)
		ticks, steps := 0, 0
		var at []int // the steps that applied a tick
		for more {
			n, m, err := s.TickStep(ctx)
			require.NoError(t, err)
			more = m
			steps++
			if n > 0 {
				ticks += n
				at = append(at, steps)
			}
		}
		assert.Equal(t, 1, ticks)
		require.Len(t, at, 1)
		assert.Greater(t, at[0], players/slice, "after the first tick's prune")
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(3), c.Tick)
		for i := range players {
			assert.Len(t, feed(i), game.KeepFeed, "player %d", i)
		}
		pruned(t, s, ids)
	})
	t.Run("Restart", func(t *testing.T) {
		// Ensure a prune cut short by a restart is finished by Open (its
		// catch-up Tick), from where it was.
		s, ids, feed := setUp(t)
		for range 3 {
			_, more, err := s.TickStep(ctx)
			require.NoError(t, err)
			require.True(t, more)
		}
		_, ok := mustKV(t, s.Path, "prune_history")
		require.True(t, ok, "a prune under way")
		s.MustReopen(t)
		for i := range players {
			assert.Len(t, feed(i), game.KeepFeed, "player %d", i)
		}
		pruned(t, s, ids)
	})
}

// TestStore_LastAuctionBidsCash checks the store plays the round's last
// auction on every player's cash (game.LastAuctionCashPercent), not only
// on the bids it holds: a tick with neither a payday nor the round's end
// loads only the bidders, but that one loads everyone.
func TestStore_LastAuctionBidsCash(t *testing.T) {
	ctx := context.Background()
	s := MustOpenStore(t, func(o *game.Options) { o.RoundTicks = 10 })
	a := MustRegister(t, s, "alice", game.FBI)
	b := MustRegister(t, s, "bob", game.MIB)
	require.NoError(t, s.SetSecrets(ctx, a.ID, 0, 500))
	require.NoError(t, s.SetSecrets(ctx, b.ID, 0, 300))
	s.Time.Add(8 * Interval) // the payday of tick 6 and the two ticks after
	_, err := s.Tick(ctx)
	require.NoError(t, err)
	pa, pb := MustPlayer(t, s, a.ID), MustPlayer(t, s, b.ID)
	require.Zero(t, pa.Bid+pb.Bid, "neither holds a bid")
	require.Zero(t, pa.Secrets+pb.Secrets)
	cashA, cashB := pa.Cash, pb.Cash

	// Tick 9, the round's last auction (and, in so short a round, its
	// grand one: a single lot of GrandLot Secrets): the cash bids.
	s.Time.Add(Interval)
	n, err := s.Tick(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	pa, pb = MustPlayer(t, s, a.ID), MustPlayer(t, s, b.ID)
	assert.Equal(t, [2]int{game.GrandLot, 0}, [2]int{pa.Secrets, pa.Cash}, "alice's $%d bought the lot", cashA)
	assert.Equal(t, [2]int{0, cashB}, [2]int{pb.Secrets, pb.Cash}, "bob's cash came back")
	assert.Zero(t, pa.Bid+pb.Bid)
}

func TestStore_PrunePlans(t *testing.T) {
	// Ensure a tick's prune reads each history's new rows by id, not down
	// the index on its groups: at 10,000 players that index holds 100,000
	// feed lines or more, and reading it to find a payday's dozen new ones
	// made the prune's step the tick's longest (10 to 16 ms of CPU).
	s := MustOpenStore(t)
	plans, err := s.PrunePlans(context.Background())
	require.NoError(t, err)
	require.Len(t, plans, 4)
	for name, plan := range plans {
		assert.Contains(t, plan, "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)", "%s:\n%s", name, plan)
		for _, line := range strings.Split(plan, "\n") {
			assert.NotRegexp(t, `USING (COVERING )?INDEX \w+ \(\w+>\?`, line, "%s reads its index by the group's range:\n%s", name, plan)
		}
	}
}
