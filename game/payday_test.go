package game_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paydayPlayers is how many players the payday tests seed, paid in steps
// of paydaySlice players: 25 steps, as many as 2,000 players would take
// in slices of 80, at a tenth of the rows to write (the tests run under
// -race too).
const (
	paydayPlayers = 200
	paydaySlice   = 8
)

// paydayChildEnv names, for the test binary run as a child process, the
// database whose payday it steps through until killed (TestPaydayChild).
const paydayChildEnv = "GAME_PAYDAY_CHILD_DB"

// figures is what a payday changes of a player, and who deserted.
type figures struct {
	Cash, AP, Agents, Security, Secrets, Unpaid int
	Place                                       string // the feed line of the last round's end
}

// mustFigures reads every player's figures from the database at path.
func mustFigures(tb testing.TB, path string) map[int64]figures {
	tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(path))
	require.NoError(tb, err)
	defer db.Close()
	rows, err := db.Query(`SELECT p.id, p.cash, p.ap, p.agents, p.security, p.secrets,
		(SELECT count(*) FROM events e WHERE e.player_id = p.id AND e.text LIKE 'Unpaid%'),
		coalesce((SELECT text FROM events e WHERE e.player_id = p.id AND e.text LIKE 'Round % is over%'
			ORDER BY e.id DESC LIMIT 1), '')
		FROM players p`)
	require.NoError(tb, err)
	defer rows.Close()
	out := map[int64]figures{}
	for rows.Next() {
		var id int64
		var f figures
		require.NoError(tb, rows.Scan(&id, &f.Cash, &f.AP, &f.Agents, &f.Security, &f.Secrets, &f.Unpaid, &f.Place))
		out[id] = f
	}
	require.NoError(tb, rows.Err())
	return out
}

// mustKV reads a kv value at path; ok is false when the key is absent.
func mustKV(tb testing.TB, path, key string) (v int64, ok bool) {
	tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(path))
	require.NoError(tb, err)
	defer db.Close()
	err = db.QueryRow(`SELECT value FROM kv WHERE key = ?`, key).Scan(&v)
	if err == sql.ErrNoRows {
		return 0, false
	}
	require.NoError(tb, err)
	return v, true
}

// mustCheapest reads the database at path for the Cheapest Secret on sale
// at tick, in dollars (0: none).
func mustCheapest(tb testing.TB, path string, tick int64) int {
	tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(path))
	require.NoError(tb, err)
	defer db.Close()
	var low int
	require.NoError(tb, db.QueryRow(`SELECT coalesce(min(price), 0) FROM sources WHERE secrets > 0 AND burned_until <= ?`, tick).Scan(&low))
	return low
}

// mustCopy copies the closed database at from to a new file to.
func mustCopy(tb testing.TB, from, to string) {
	tb.Helper()
	buf, err := os.ReadFile(from)
	require.NoError(tb, err)
	require.NoError(tb, os.WriteFile(to, buf, 0o600))
	_, err = os.Stat(from + "-wal")
	require.True(tb, os.IsNotExist(err), "a closed store leaves no WAL behind")
}

// paydayDue is when the payday of seedPayday is due.
var paydayDue = Epoch.Add(game.PayTicks * Interval)

// seedPayday seeds paydayPlayers players, plays the ticks up to the one
// before a payday and closes the store: the payday is due at paydayDue.
// It returns the database's path.
func seedPayday(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	s := MustOpenStore(tb)
	_, err := s.Seed(ctx, paydayPlayers)
	require.NoError(tb, err)
	s.Time.Add((game.PayTicks - 1) * Interval)
	n, err := s.Tick(ctx)
	require.NoError(tb, err)
	require.Equal(tb, game.PayTicks-1, n)
	s.MustClose(tb)
	return s.Path
}

// setUpPayday copies the database seedPayday made at seeded and returns
// the copy's path and the figures after the ticks due later intervals
// past paydayDue in rounds of roundTicks, applied at once on another copy
// (the payday in one step).
func setUpPayday(tb testing.TB, seeded string, roundTicks int64, later int) (path string, whole map[int64]figures) {
	tb.Helper()
	ctx := context.Background()
	path, ref := filepath.Join(tb.TempDir(), "steps.db"), filepath.Join(tb.TempDir(), "whole.db")
	mustCopy(tb, seeded, path)
	mustCopy(tb, seeded, ref)
	once, err := game.Open(ref, game.Options{ // Open ticks: the payday at once
		TickInterval: Interval, RoundTicks: roundTicks, SessionTTL: time.Hour, PaySlice: 1 << 30,
		Rand: rand.New(rand.NewPCG(1, 2)),
		Now:  func() time.Time { return paydayDue.Add(time.Duration(later) * Interval) },
	})
	require.NoError(tb, err)
	c, err := once.Clock(ctx)
	require.NoError(tb, err)
	require.Equal(tb, int64(game.PayTicks+later), c.Tick)
	require.NoError(tb, once.Close())
	return path, mustFigures(tb, ref)
}

// openPayday opens the store at path with rounds of roundTicks and
// paydaySlice steps, on clock.
func openPayday(tb testing.TB, path string, roundTicks int64, clock *testkit.Clock, seed uint64) *game.Store {
	tb.Helper()
	s, err := game.Open(path, game.Options{
		TickInterval: Interval, RoundTicks: roundTicks, SessionTTL: time.Hour, PaySlice: paydaySlice,
		Rand: rand.New(rand.NewPCG(seed, 2)), Now: clock.Now,
	})
	require.NoError(tb, err)
	return s
}

// beforePayday is a clock just short of paydayDue: a store opened on it
// does not pay the payday in Open. Add(time.Nanosecond) makes it due.
func beforePayday() *testkit.Clock {
	return testkit.NewClock(paydayDue.Add(-time.Nanosecond))
}

// TestPaydayChild is not a test: run by TestStore_TickStep as a child
// process, it steps through the payday of the database paydayChildEnv
// names, one step for each byte it reads on its standard input, printing
// "step" after each step committed, until it is killed or the payday is
// paid.
func TestPaydayChild(t *testing.T) {
	path := os.Getenv(paydayChildEnv)
	if path == "" {
		t.Skip("run by TestStore_TickStep/KilledMidPayday")
	}
	clock := beforePayday()
	s := openPayday(t, path, 100, clock, 9)
	clock.Add(time.Nanosecond)
	var b [1]byte
	for {
		_, err := os.Stdin.Read(b[:])
		require.NoError(t, err)
		_, more, err := s.TickStep(context.Background())
		require.NoError(t, err)
		fmt.Println("step")
		if !more {
			return
		}
	}
}

func TestStore_TickStep(t *testing.T) {
	ctx := context.Background()
	seeded := seedPayday(t)
	t.Run("KilledMidPayday", func(t *testing.T) {
		// Ensure a process killed (SIGKILL) part way through a payday's
		// steps, three times, and the payday finished by the next Open,
		// pays every player exactly once: the same figures and desertion
		// lines as the payday paid at once.
		path, whole := setUpPayday(t, seeded, 100, 0)
		var last int64
		for kill := range 3 {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPaydayChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), paydayChildEnv+"="+path)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			// One step more than waited for, so that the kill most likely
			// lands in it, and the payday cannot end before the kill
			// however far the child gets ahead of this process.
			_, err = in.Write(make([]byte, 3+kill))
			require.NoError(t, err)
			lines := bufio.NewScanner(out)
			for steps := 0; steps < 2+kill && lines.Scan(); {
				if lines.Text() == "step" {
					steps++
				}
			}
			require.NoError(t, cmd.Process.Kill()) // in the middle of the next step, most likely
			go io.Copy(io.Discard, out)
			_ = cmd.Wait()

			cursor, ok := mustKV(t, path, "pay_cursor")
			require.True(t, ok, "kill %d: the payday is half paid", kill)
			require.Greater(t, cursor, last, "kill %d: each child paid some", kill)
			last = cursor
		}

		s := openPayday(t, path, 100, testkit.NewClock(paydayDue), 3) // Open pays the rest
		c, err := s.Clock(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(game.PayTicks), c.Tick)
		require.NoError(t, s.Close())
		_, ok := mustKV(t, path, "pay_cursor")
		assert.False(t, ok, "the payday is over")
		got := mustFigures(t, path)
		require.Len(t, got, paydayPlayers)
		for id, w := range whole {
			if !assert.Equal(t, w, got[id], "player %d", id) {
				break
			}
		}
	})
	t.Run("LateTicksMidPayday", func(t *testing.T) {
		// Ensure more ticks falling due while a payday is half paid (a
		// catch-up, the round's end or the next payday among them)
		// finish the payday once, then apply the rest:
		// the figures, desertions and round-end lines as when all the
		// ticks were applied at once.
		for _, tc := range []struct {
			name       string
			roundTicks int64
			later      int
		}{
			{"CatchUp", 100, 3},
			{"RoundEnd", game.PayTicks + 2, 2},
			{"NextPayday", 100, game.PayTicks},
		} {
			t.Run(tc.name, func(t *testing.T) {
				path, whole := setUpPayday(t, seeded, tc.roundTicks, tc.later)
				clock := beforePayday()
				s := openPayday(t, path, tc.roundTicks, clock, 4)
				defer s.Close()
				clock.Add(time.Nanosecond)
				for range 5 {
					n, more, err := s.TickStep(ctx)
					require.NoError(t, err)
					require.True(t, more)
					require.Zero(t, n)
				}
				clock.Add(time.Duration(tc.later) * Interval)
				n, err := s.Tick(ctx)
				require.NoError(t, err)
				assert.Equal(t, 1+tc.later, n)
				_, ok := mustKV(t, path, "pay_cursor")
				assert.False(t, ok, "the payday is over")
				if tc.name == "RoundEnd" {
					require.Contains(t, whole[1].Place, "Round 1 is over", "the round ended")
				}
				got := mustFigures(t, path)
				for id, w := range whole {
					if !assert.Equal(t, w, got[id], "player %d", id) {
						break
					}
				}
			})
		}
	})
	t.Run("TwoStoresAndOrders", func(t *testing.T) {
		// Ensure two Stores on one file (two processes) stepping through
		// one payday at once, while players fortify through either,
		// pay everyone once and lose no order: each player who fortified
		// ends as paid then fortified or fortified then paid, the others
		// as the payday paid at once.
		path, whole := setUpPayday(t, seeded, 100, 0)
		before := mustFigures(t, path)
		clock := beforePayday()
		stores := []*game.Store{openPayday(t, path, 100, clock, 5), openPayday(t, path, 100, clock, 6)}
		defer func() {
			for _, s := range stores {
				require.NoError(t, s.Close())
			}
		}()
		clock.Add(time.Nanosecond)

		// Each store, after each step it takes, has two players fortify
		// through it while the other store may be stepping; the players
		// in a random order, each at most once, so that some are paid
		// already and some not yet.
		var mu sync.Mutex
		fortified := map[int64]bool{}
		ids := rand.New(rand.NewPCG(7, 8)).Perm(paydayPlayers)
		order := func(s *game.Store) {
			mu.Lock()
			id := int64(ids[0] + 1)
			ids = ids[1:]
			mu.Unlock()
			_, err := s.Act(ctx, id, game.Action{Kind: game.Fortify})
			if err != nil {
				assert.Equal(t, game.EINVALID, game.ErrorCode(err), "player %d: %v", id, err)
				return
			}
			mu.Lock()
			fortified[id] = true
			mu.Unlock()
		}
		var stepping sync.WaitGroup
		var ticks atomic.Int64
		for _, s := range stores {
			stepping.Go(func() {
				for {
					n, more, err := s.TickStep(ctx)
					if !assert.NoError(t, err) {
						return
					}
					ticks.Add(int64(n))
					if !more {
						return
					}
					order(s)
					order(s)
				}
			})
		}
		stepping.Wait()
		assert.Equal(t, int64(1), ticks.Load(), "one tick between both stores")

		lead, cheapest := 0, mustCheapest(t, path, game.PayTicks)
		for _, f := range before {
			lead = max(lead, f.Secrets)
		}
		got := mustFigures(t, path)
		paidFirst := 0
		for id, w := range whole {
			if !fortified[id] {
				if !assert.Equal(t, w, got[id], "player %d, no order", id) {
					break
				}
				continue
			}
			b := before[id]
			payFirst := fortify(payday(b, id, lead, cheapest))
			fortifyFirst := payday(fortify(b), id, lead, cheapest)
			switch got[id] {
			case payFirst:
				paidFirst++
			case fortifyFirst:
			default:
				assert.Fail(t, "fortified, neither paid once then fortified nor fortified then paid once",
					"player %d: got %+v, want %+v or %+v", id, got[id], payFirst, fortifyFirst)
			}
		}
		t.Logf("%d players fortified during the payday, %d of them paid already", len(fortified), paidFirst)
		assert.NotZero(t, paidFirst, "orders after a player's pay")
		assert.Less(t, paidFirst, len(fortified), "orders before a player's pay")
	})
}

// fortify is f after a Fortify order.
func fortify(f figures) figures {
	f.Security++
	f.Cash -= game.FortifyCost
	f.AP -= game.FortifyAP
	return f
}

// payday is f, player id's, after the payday of paydayPlayers with lead
// and the cheapest Secret on sale.
func payday(f figures, id int64, lead, cheapest int) figures {
	p := []game.Player{{ID: id, Cash: f.Cash, AP: f.AP, Agents: f.Agents, Security: f.Security, Secrets: f.Secrets}}
	notes := game.Payday(game.PayTicks, p, lead, paydayPlayers, cheapest)
	return figures{Cash: p[0].Cash, AP: p[0].AP, Agents: p[0].Agents, Security: p[0].Security,
		Secrets: p[0].Secrets, Unpaid: f.Unpaid + len(notes)}
}
