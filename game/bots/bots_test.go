package bots_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/bots"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/loadtest"
)

// serveGame serves a fresh game on the loop on loopback, ticking every
// tick, with its live streams polled as cmd/gameserver does, and returns
// its URL and store. It stops with the test.
func serveGame(t *testing.T, tick time.Duration) (string, *game.Store) {
	t.Helper()
	store, err := game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{BcryptCost: bcrypt.MinCost, TickInterval: tick})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	h, err := handlers.New(store, handlers.Options{})
	require.NoError(t, err)
	srv := gameserver.New(gameserver.Config{Handler: h})
	srv.Every(handlers.LivePollInterval, func() { h.PollLive(context.Background()) })
	srv.Every(tick/4, func() { store.Tick(context.Background()) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() { srv.Serve(l); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return "http://" + l.Addr().String(), store
}

func TestPlayersPlay(t *testing.T) {
	// Ensure several players enlist, keep their pages' streams open, view
	// pages and give orders that the store keeps, and that each order's
	// "player" event reaches the other players' streams on pages that show
	// standings (delivery).
	url, store := serveGame(t, time.Second)
	const n = 4
	var mu sync.Mutex
	orders := map[int][]game.Action{}
	cfg := bots.Config{
		Account: func(id int) bots.Account {
			f := game.FBI
			if id%2 == 1 {
				f = game.MIB
			}
			return bots.Account{Name: fmt.Sprintf("bot%02d", id), Password: fmt.Sprintf("quasar-%d-tangerine-walrus", id), Faction: f, Register: true}
		},
		// Each page viewed (an order's redirect too) opens its stream, and
		// a session opens LiveOpenBurstSession at once, then one a second:
		// this pace (0.9 a second) stays under that however long the run
		// lasts (it lasts until a Secret changes hands, which takes longer
		// since cash is the limit). Every page shows standings, so every
		// stream gets the player events.
		PageEvery: 4 * time.Second, OrderEvery: 1500 * time.Millisecond,
		Pages: []bots.Page{{Name: "ranking", Weight: 1}, {Name: "dossiers", Weight: 1}},
		Orders: func(id int, a game.Action) {
			mu.Lock()
			orders[id] = append(orders[id], a)
			mu.Unlock()
		},
	}
	// How many orders four players give in a fixed time, and so whether
	// one of them changed a standing that streams show, depends on how
	// busy the machine is: the run lasts 6 s at least and then goes on
	// until the end of the first second in which an order's event reached
	// another player's stream (a "threshold" that breaks on a delivery),
	// or two minutes.
	untilDelivered, err := loadtest.ParseThreshold("delivery.rate==0")
	require.NoError(t, err)
	res, err := loadtest.RunUsers(t.Context(), loadtest.UsersConfig{URL: url, Arrival: loadtest.Arrival{From: n, To: n},
		Hold: 2 * time.Minute, MinWindows: 6, StopWhen: []loadtest.Threshold{untilDelivered}, Scenario: bots.Scenario(cfg)})
	require.NoError(t, err)
	var report strings.Builder
	require.Zero(t, loadtest.Print(res, loadtest.PrintOptions{Stdout: &report, Stderr: &report}), report.String())
	t.Log("\n" + report.String())
	assert.Empty(t, res.Errors, "no step failed")
	assert.Zero(t, res.Failed)
	assert.EqualValues(t, n, res.Step("register").Count)
	assert.Greater(t, res.Step("events").Count, int64(n), "a stream for each page viewed, never cut (no events error)")
	assert.Positive(t, res.Step("page").Count)
	assert.Positive(t, res.Step("order").Count)

	rk, err := store.Ranking(t.Context())
	require.NoError(t, err)
	require.Len(t, rk.Players, n)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range rk.Players {
		var id int
		_, err := fmt.Sscanf(p.Name, "bot%02d", &id)
		require.NoError(t, err)
		if len(orders[id]) == 0 {
			continue
		}
		feed, err := store.Events(t.Context(), p.ID, 100)
		require.NoError(t, err)
		assert.NotEmpty(t, feed, "%s's orders (%v) are in its feed", p.Name, orders[id])
	}
	assert.GreaterOrEqual(t, len(orders), n/2, "most players gave orders the server took: %v", orders)
	assert.Positive(t, res.Delivery.Count, "orders' events reached the other players' streams")
	assert.Less(t, res.Delivery.Latency.Max, 5*time.Second)
	assert.Greater(t, res.Events, int64(n), "hello, ticks and others' events")
}
