package handlers_test

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBrokerBid(t *testing.T) {
	// Ensure the Sources page places, shows, changes and withdraws the
	// player's sealed bid, the cash set aside at once, and refuses a bid
	// under the least, saying so.
	e, tid, mulder, _ := twoPlayers(t)
	sources := "/game?function=sources&tid=" + tid
	_, page := e.client().get(sources)
	assert.Contains(t, page, "You hold no bid.")
	assert.Contains(t, page, fmt.Sprintf("at least $%d", game.AuctionMinBid))

	resp, _ := e.client().act(sources, url.Values{"function": {"bid"}, "bid": {strconv.Itoa(game.AuctionMinBid)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, sources, location(resp))
	_, page = e.client().get(sources)
	assert.Contains(t, page, fmt.Sprintf("Your bid: <strong>$%d</strong>, set aside from your cash.", game.AuctionMinBid))
	assert.Equal(t, game.StartCash-game.AuctionMinBid, e.stats(mulder.ID).Cash)

	_, refusal := e.client().refused(sources, url.Values{"function": {"bid"}, "bid": {"1"}})
	assert.Equal(t, fmt.Sprintf("The broker takes bids of $%d or more; you bid $1.", game.AuctionMinBid), refusal)
	_, refusal = e.client().refused(sources, url.Values{"function": {"bid"}, "bid": {"lots"}})
	assert.Contains(t, refusal, `The field "bid" must be a whole number of dollars, 0 or more`)

	e.client().act(sources, url.Values{"function": {"bid"}, "bid": {"0"}})
	_, page = e.client().get(sources)
	assert.Contains(t, page, "You hold no bid.")
	assert.Equal(t, game.StartCash, e.stats(mulder.ID).Cash)
}

func TestBrokerAuction(t *testing.T) {
	// Ensure the broker sells at the auction's tick: the best bid gains a
	// Secret, the other gets its cash back, and the Sources page tells
	// the last auction.
	e := newEnv(t) // a week's round: the first auction is no grand one
	mulder, tid := e.player("mulder", game.FBI)
	krycek, ktid := e.player("krycek", game.MIB)
	for who, bid := range map[string]int{tid: game.AuctionMinBid + 10, ktid: game.AuctionMinBid} {
		e.client().act("/game?function=sources&tid="+who, url.Values{"function": {"bid"}, "bid": {strconv.Itoa(bid)}})
	}
	e.clock.Add((game.AuctionTicks - 1) * 10 * time.Minute) // the first day's last tick
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	m, k := e.stats(mulder.ID), e.stats(krycek.ID)
	assert.Equal(t, [2]int{1, 0}, [2]int{m.Secrets, k.Secrets})
	assert.Equal(t, [2]int{0, 0}, [2]int{m.Bid, k.Bid})
	assert.GreaterOrEqual(t, k.Cash, game.StartCash, "the losing bid is back")
	_, page := e.client().get("/game?function=sources&tid=" + tid)
	assert.Contains(t, page, fmt.Sprintf("Last auction, tick %d: ", game.AuctionTicks-1)+game.AuctionNews+" 1 Secret to sealed bids: to mulder (FBI) for $"+
		strconv.Itoa(game.AuctionMinBid+10)+". 1 bid lost")
}

func TestDefenceOrders(t *testing.T) {
	// Ensure HQ sets a trap and runs a sweep, and says so after.
	e, tid, mulder, _ := twoPlayers(t)
	hq := "/game?function=hq&tid=" + tid
	_, page := e.client().get(hq)
	assert.Contains(t, page, "You have no trap set.")
	assert.Contains(t, page, "No sweep is running.")
	e.client().act(hq, url.Values{"function": {"trap"}})
	e.client().act(hq, url.Values{"function": {"sweep"}})
	_, page = e.client().get(hq)
	assert.Contains(t, page, "<strong>Your trap is set.</strong>")
	assert.Contains(t, page, fmt.Sprintf("<strong>Your sweep runs until tick %d.</strong>", game.SweepTicks))
	p := e.stats(mulder.ID)
	assert.Equal(t, game.StartCash-game.TrapCost-game.SweepCost, p.Cash)
	_, refusal := e.client().refused(hq, url.Values{"function": {"trap"}})
	assert.Contains(t, refusal, "Your trap is set already")
}

var (
	stealOdds = regexp.MustCompile(`name="function" value="steal">.*?data-odds="(\d+%)"`)
	spyOdds   = regexp.MustCompile(`name="function" value="spy">.*?data-odds="(\d+%)"`)
	oddsWhy   = regexp.MustCompile(`<p class="odds muted" id="odds-\d+">([^<]*)</p>`)
)

func TestDossierOdds(t *testing.T) {
	// Ensure the Spy and Steal buttons show the odds their orders are
	// rolled at, and why: blind and a guessed security without a file; the
	// file's security and cased once a spy got in; and that the odds shown
	// before a steal are the odds its report gives.
	e, tid, mulder, krycek := twoPlayers(t)
	srcs, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	cheap := slices.MinFunc(srcs, func(a, b game.Source) int { return cmp.Compare(a.Price, b.Price) })
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Haggle, SourceID: cheap.ID, Offer: cheap.Price})
	require.NoError(t, err)                                       // krycek is ahead: one to rob
	e.exec(`UPDATE players SET cash = 0 WHERE id = ?`, mulder.ID) // cash that would buy the gap rules a theft out
	dossiers := "/game?function=dossiers&tid=" + tid
	_, page := e.client().get(dossiers)
	assert.Equal(t, game.Percent(game.StealOdds(game.StartAgents, game.StartSecurity, false, 2)), stealOdds.FindStringSubmatch(page)[1])
	assert.Contains(t, oddsWhy.FindStringSubmatch(page)[1], "security 1 (a guess) ×2 head to head + 3 going in blind to steal: no file on them")

	e.clock.Add(game.NewPlayerProtection * 10 * time.Minute)
	_, err = e.store.Tick(t.Context())
	require.NoError(t, err)
	e.exec(`UPDATE players SET cash = 0 WHERE id = ?`, mulder.ID) // cash that would buy the gap rules a theft out
	for range 10 {                                                // spy until a spy gets in
		e.client().act(dossiers, url.Values{"function": {"spy"}, "target": {strconv.FormatInt(krycek.ID, 10)}})
		if d, _ := e.store.Dossiers(t.Context(), mulder.ID); len(d) > 0 && d[0].Known {
			break
		}
	}
	_, page = e.client().get(dossiers)
	require.Contains(t, page, "fresh enough to case the place")
	shown := stealOdds.FindStringSubmatch(page)[1]
	assert.Equal(t, game.Percent(game.SpyOdds(game.StartAgents, game.StartSecurity)), spyOdds.FindStringSubmatch(page)[1])
	e.client().act(dossiers, url.Values{"function": {"steal"}, "target": {strconv.FormatInt(krycek.ID, 10)}})
	reports, err := e.store.Reports(t.Context(), mulder.ID, 1)
	require.NoError(t, err)
	require.Equal(t, game.Steal, reports[0].Kind)
	assert.Equal(t, shown, game.Percent(reports[0].Odds), "the odds shown before the steal are its report's")

	// After a theft the Steal button gives way to when the agents may go again.
	_, page = e.client().get(dossiers)
	assert.Contains(t, page, fmt.Sprintf("No theft: your agents lie low until tick %d", reports[0].Tick+game.StealCooldown))
	assert.NotContains(t, page, `value="steal"`)
}

func TestNewsFoldsRepeats(t *testing.T) {
	// Ensure a run of the same news line (one agent buying from one source
	// again and again) shows once on the News page, with how many times.
	e, tid, mulder, _ := twoPlayers(t)
	e.clock.Add(8 * game.PayTicks * 10 * time.Minute) // eight paydays: cash for two Secrets
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	for range 2 {
		src := cheapest(t, e)
		_, err := e.store.Act(t.Context(), mulder.ID, game.Action{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price})
		require.NoError(t, err)
	}
	_, page := e.client().get("/game?function=news&tid=" + tid)
	line := "mulder (FBI) bought a Secret from Late-Night Radio Host."
	assert.Equal(t, 1, strings.Count(page, line), "one line for the run")
	assert.Contains(t, page, `<li data-times="2">`)
	assert.Contains(t, page, `<span class="times">×2</span>`)
}
