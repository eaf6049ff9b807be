package handlers_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestHQ_LastCall(t *testing.T) {
	// Ensure HQ tells a player when the round ends before their usual next
	// visit (within game.LastCallTicks): how long is left, that cash left
	// then counts for nothing, and when the broker's final auction closes;
	// and says nothing of it earlier in the round.
	const round = game.LastCallTicks + 20
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = round })
	_, tid := e.player("mulder", game.FBI)
	hq := "/game?function=hq&tid=" + tid
	tick := func(n int) {
		e.clock.Add(time.Duration(n) * 10 * time.Minute)
		_, err := e.store.Tick(t.Context())
		require.NoError(t, err)
	}

	resp, page := e.client().get(hq)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, page, "Last call", "a day and more left")

	tick(30) // round-30 ticks left: within the last call
	_, page = e.client().get(hq)
	left := round - 30
	assert.Contains(t, page, fmt.Sprintf("Last call: %d ticks (%d h) left in the round", left, left*10/60))
	assert.Contains(t, page, fmt.Sprintf("Cash left then buys nothing and counts for nothing: the ranking is on Secrets, and round 2 starts everyone again with $%d.", game.StartCash))
	assert.Contains(t, page, "A Secret bought at that auction also breaks a tie: of players level on Secrets when the round ends, its buyer places ahead.")
	assert.Contains(t, page, fmt.Sprintf("the broker's final auction, which closes at tick %d,", round-1))
	assert.Contains(t, page, fmt.Sprintf("Whatever cash you still hold then, the broker bids for you, with your bid if you hold one, when the two come to $%d or more.", game.AuctionMinBid))

	tick(left - 1) // the final auction's tick
	_, page = e.client().get(hq)
	assert.Contains(t, page, "Last call: 1 tick (10 min) left in the round")
	assert.Contains(t, page, "The broker's final auction has closed; the sources still sell.")
}
