package game_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAuctionDue checks the broker sells on the last tick of every day of
// the round and on its last tick but one, and nowhere else; and where the
// grand auction falls.
func TestAuctionDue(t *testing.T) {
	week := game.Clock{RoundStart: 1000, RoundTicks: 7 * game.AuctionTicks}
	var due []int64
	for tick := week.RoundStart - 5; tick <= week.RoundEnd()+5; tick++ {
		if game.AuctionDue(week, tick) {
			due = append(due, tick-week.RoundStart)
		}
	}
	d := int64(game.AuctionTicks)
	assert.Equal(t, []int64{d - 1, 2*d - 1, 3*d - 1, 4*d - 1, 5*d - 1, 6*d - 1, 7*d - 1}, due)
	assert.Equal(t, week.RoundStart+4*d-1, game.GrandAuction(week), "the first auction past the middle of the week")
	assert.Equal(t, week.RoundStart+d-1, game.NextAuction(week, week.RoundStart))
	assert.Equal(t, week.RoundStart+d-1, game.NextAuction(week, week.RoundStart+d-1))
	assert.Equal(t, week.RoundStart+2*d-1, game.NextAuction(week, week.RoundStart+d))

	// A short round (a test server's) has its one auction on its last tick but one.
	short := game.Clock{RoundStart: 40, RoundTicks: 30}
	assert.Equal(t, int64(69), game.NextAuction(short, 41))
	assert.Equal(t, int64(69), game.GrandAuction(short))
	assert.True(t, game.AuctionDue(short, 69))
	assert.False(t, game.AuctionDue(short, 70), "the round's last tick starts the next round")

	assert.Equal(t, []int{0, 1, 1, 2, 2, 3}, []int{game.AuctionLots(0), game.AuctionLots(1), game.AuctionLots(2),
		game.AuctionLots(3), game.AuctionLots(4), game.AuctionLots(5)})
}

// TestResolve_Bid plays the bid order: the cash is set aside at once, a
// changed bid gives back the old one, 0 withdraws it.
func TestResolve_Bid(t *testing.T) {
	for _, tc := range bidCases() {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

func bidCases() []ruleCase {
	bid := func(n int) game.Action { return game.Action{Kind: game.Bid, Offer: n} }
	holding := func(n int) func(*game.Player) { return func(p *game.Player) { p.Cash, p.Bid, p.BidTick = 300-n, n, 7 } }
	min := game.AuctionMinBid
	return []ruleCase{
		{name: "BidPlaced", action: bid(min), outcome: fmt.Sprintf("bid of $%d is with the broker", min),
			want: func(a, _ *game.Player, _ *game.Source) { a.Cash, a.Bid, a.BidTick = 300-min, min, 20 }},
		{name: "BidNoAP", actor: func(p *game.Player) { p.AP = 0 }, action: bid(min), outcome: "with the broker",
			want: func(a, _ *game.Player, _ *game.Source) { a.Cash, a.Bid, a.BidTick = 300-min, min, 20 }},
		{name: "BidChanged", actor: holding(min), action: bid(300), outcome: "$300",
			want: func(a, _ *game.Player, _ *game.Source) { a.Cash, a.Bid, a.BidTick = 0, 300, 20 }},
		{name: "BidWithdrawn", actor: holding(min), action: bid(0), outcome: "withdrew your bid",
			want: func(a, _ *game.Player, _ *game.Source) { a.Cash, a.Bid, a.BidTick = 300, 0, 20 }},
		{name: "BidNothingToWithdraw", action: bid(0), errMsg: "You hold no bid to withdraw."},
		{name: "BidUnderLeast", action: bid(min - 1), errMsg: fmt.Sprintf("The broker takes bids of $%d or more; you bid $%d.", min, min-1)},
		{name: "BidOverCash", actor: holding(min), action: bid(301),
			errMsg: fmt.Sprintf("You bid $301 but have only $300 (with the $%d of your bid).", min)},
	}
}

// TestWorld_Auction checks the broker's sale at its tick: one Secret per
// two bids, rounded up, to the best; level bids to the earlier, then the
// lower id; losers get their cash back; no bid stands after.
func TestWorld_Auction(t *testing.T) {
	bidder := func(id int64, name string, bid int, at int64) game.Player {
		p := game.Player{ID: id, Name: name, Faction: game.FBI, Cash: 10, Bid: bid, BidTick: at, AP: 5}
		return p
	}
	ps := []game.Player{
		bidder(1, "ann", 300, 9), bidder(2, "bea", 500, 9), bidder(3, "cid", 300, 4), bidder(4, "dot", 0, 0), bidder(5, "eve", 250, 1),
	}
	w := world(ps...)
	w.Clock = game.Clock{Tick: game.AuctionTicks - 2, Round: 1, RoundTicks: 7 * game.AuctionTicks}
	notes := w.Advance(&Dice{tb: t})
	got := map[string][2]int{}
	for _, p := range w.Players {
		got[p.Name] = [2]int{p.Secrets, p.Cash}
		assert.Zero(t, p.Bid, p.Name)
		assert.Zero(t, p.BidTick, p.Name)
	}
	// 4 bids: 2 lots, to bea ($500) and cid ($300, placed before ann's).
	assert.Equal(t, map[string][2]int{"ann": {0, 310}, "bea": {1, 10}, "cid": {1, 10}, "dot": {0, 10}, "eve": {0, 260}}, got)
	require.NotEmpty(t, notes)
	assert.Equal(t, game.Note{Tick: game.AuctionTicks - 1, Text: game.AuctionNews +
		" 2 Secrets to sealed bids: to bea (FBI) for $500, cid (FBI) for $300. 2 bids lost, the best at $300."}, notes[0])
	assert.Contains(t, notes, game.Note{Tick: game.AuctionTicks - 1, PlayerID: 1, Alert: true,
		Text: "The broker turned down your bid of $300 (the lowest taken was $300); it is back in your cash."})
	assert.Contains(t, notes, game.Note{Tick: game.AuctionTicks - 1, PlayerID: 2, Alert: true,
		Text: "The broker took your bid of $500: you hold 1 Secret more, 1 in all."})

	// The day after: nothing to sell.
	assert.Empty(t, w.Advance(&Dice{tb: t}))
}

// TestWorld_AuctionReserve checks a lone bid buys only at the reserve,
// the sources' mean asking price (rounded up), and comes back under it;
// two bids compete whatever they offer.
func TestWorld_AuctionReserve(t *testing.T) {
	// Burned sources roll no dice at the tick; their prices still count.
	sources := []game.Source{{ID: 1, Price: 300, BasePrice: 300, Secrets: 1, BurnedUntil: 1e6},
		{ID: 2, Price: 401, BasePrice: 401, Secrets: 1, BurnedUntil: 1e6}}
	assert.Equal(t, 351, game.AuctionReserve(sources, false))
	assert.Equal(t, 351*game.GrandLot, game.AuctionReserve(sources, true))
	assert.Zero(t, game.AuctionReserve(nil, false))
	for _, tc := range []struct {
		bids    []int
		secrets []int
	}{
		{[]int{350}, []int{0}},         // alone, a dollar under the reserve
		{[]int{351}, []int{1}},         // alone, at it
		{[]int{200, 0}, []int{0, 0}},   // alone beside a player who holds no bid
		{[]int{200, 210}, []int{0, 1}}, // two bids: the best wins, under the reserve
	} {
		var ps []game.Player
		for i, b := range tc.bids {
			ps = append(ps, game.Player{ID: int64(i + 1), Name: fmt.Sprint("p", i), Faction: game.FBI, Bid: b, BidTick: 1})
		}
		w := world(ps...)
		w.Sources = sources
		w.Clock = game.Clock{Tick: game.AuctionTicks - 2, Round: 1, RoundTicks: 7 * game.AuctionTicks}
		notes := w.Advance(&Dice{tb: t})
		for i, p := range w.Players {
			assert.Equal(t, tc.secrets[i], p.Secrets, "bids %v: p%d", tc.bids, i)
			assert.Equal(t, tc.bids[i]*(1-tc.secrets[i]), p.Cash, "bids %v: p%d's cash, back unless it won", tc.bids, i)
			assert.Zero(t, p.Bid)
		}
		if tc.secrets[0] == 0 && len(tc.bids) > 0 && tc.bids[0] > 0 && (len(tc.bids) == 1 || tc.bids[1] == 0) {
			assert.Equal(t, game.AuctionNews+" nothing: a lone sealed bid, under its reserve of $351.", notes[0].Text)
		}
	}
}

// TestWorld_GrandAuction checks the mid-week auction sells one lot of
// GrandLot Secrets to the best bid alone.
func TestWorld_GrandAuction(t *testing.T) {
	a, b := alice(), bob()
	a.Cash, a.Bid, a.BidTick = 0, 700, 3
	b.Cash, b.Bid, b.BidTick = 0, 650, 2
	w := world(a, b)
	w.Clock = game.Clock{Round: 1, RoundTicks: 7 * game.AuctionTicks}
	w.Clock.Tick = game.GrandAuction(w.Clock) - 1
	notes := w.Advance(&Dice{tb: t})
	assert.Equal(t, game.GrandLot, w.Players[0].Secrets)
	assert.Equal(t, 1, w.Players[1].Secrets, "bob kept his one Secret")
	assert.Equal(t, 650, w.Players[1].Cash, "and got his bid back")
	assert.Contains(t, notes[0].Text, fmt.Sprintf("its mid-week lot of %d Secrets to the best sealed bid: to alice (FBI) for $700.", game.GrandLot))
}

// TestWorld_GrandAuctionReserve checks a lone bid under the grand
// auction's reserve is told the reserve is for the lot of GrandLot
// Secrets, in the news and on the bidder's wire.
func TestWorld_GrandAuctionReserve(t *testing.T) {
	a := alice()
	a.Cash, a.Bid, a.BidTick = 0, 300, 3
	w := world(a)
	w.Sources = []game.Source{{ID: 1, Price: 300, BasePrice: 300, Secrets: 1, BurnedUntil: 1e6},
		{ID: 2, Price: 401, BasePrice: 401, Secrets: 1, BurnedUntil: 1e6}}
	w.Clock = game.Clock{Round: 1, RoundTicks: 7 * game.AuctionTicks}
	w.Clock.Tick = game.GrandAuction(w.Clock) - 1
	notes := w.Advance(&Dice{tb: t})
	assert.Zero(t, w.Players[0].Secrets)
	assert.Equal(t, 300, w.Players[0].Cash, "the bid is back")
	reserve := 351 * game.GrandLot
	require.Len(t, notes, 2)
	assert.Equal(t, fmt.Sprintf("%s nothing: a lone sealed bid, under its reserve of $%d for its mid-week lot of %d Secrets.",
		game.AuctionNews, reserve, game.GrandLot), notes[0].Text)
	assert.Equal(t, fmt.Sprintf("The broker sold nothing: yours was the only bid, and a lone bid buys only at the reserve, $%d "+
		"(%d times the sources' mean price, for the lot of %d Secrets). Your $300 is back in your cash.", reserve, game.GrandLot, game.GrandLot),
		notes[1].Text)
}

// TestSource_DayPrice checks a source's price of the day rises by
// DailyInflation percent of its base each day, and that its price drifts
// toward it.
func TestSource_DayPrice(t *testing.T) {
	s := throat()
	assert.Equal(t, 300, s.DayPrice(0))
	assert.Equal(t, 300+3*300*game.DailyInflation/100, s.DayPrice(3))
	w := world(alice())
	w.Sources = []game.Source{s}
	w.Clock = game.Clock{Tick: 3*game.AuctionTicks + 10, Round: 1, RoundTicks: 7 * game.AuctionTicks}
	w.Advance(&Dice{tb: t, values: []int{1}})
	assert.Equal(t, 300+max(1, (s.DayPrice(3)-300)/game.PriceDrift), w.Sources[0].Price, "a step up toward the price of day 3")
}

// TestWorld_LastAuctionBidsCash checks the round's last auction bids
// LastAuctionCashPercent of every player's cash for them, added to the
// bid they hold, when the two come to AuctionMinBid or more; the day's
// auctions before it take only the bids.
func TestWorld_LastAuctionBidsCash(t *testing.T) {
	require.Equal(t, 100, game.LastAuctionCashPercent, "the cases below assume all the cash is bid")
	min := game.AuctionMinBid
	player := func(id int64, name string, cash, bid int) game.Player {
		return game.Player{ID: id, Name: name, Faction: game.FBI, Cash: cash, Bid: bid, BidTick: 5}
	}
	ps := []game.Player{
		player(1, "ann", 650, 0),     // a once-a-day player's last day of pay: bids $650
		player(2, "bea", 100, 300),   // a bid of $300 and $100 of cash: bids $400
		player(3, "cid", min-1, 0),   // under the least bid: keeps the cash
		player(4, "dot", 150, 0),     // likewise
		player(5, "eve", min, 0),     // exactly the least: bids it
		player(6, "fay", 0, min+10),  // a bid, no cash: bids as before
		player(7, "gus", min-50, 50), // cash and bid come to the least together
	}
	round := game.Clock{Round: 1, RoundTicks: 7 * game.AuctionTicks}
	final := round.RoundEnd() - 1

	// A day's auction: only the bids of bea, fay and gus (2 lots).
	w := world(slices.Clone(ps)...)
	w.Clock = round
	w.Clock.Tick = game.AuctionTicks - 2
	w.Advance(&Dice{tb: t})
	for _, p := range w.Players {
		was := ps[p.ID-1]
		if was.Bid == 0 {
			assert.Equal(t, was.Cash, p.Cash, "%s's cash, with no bid, at a day's auction", p.Name)
			assert.Zero(t, p.Secrets, p.Name)
		}
	}

	// The round's last auction: ann $650, bea $400, eve $200, fay $210 and gus $200 bid: 3 lots.
	w = world(slices.Clone(ps)...)
	w.Clock = round
	w.Clock.Tick = final - 1
	notes := w.Advance(&Dice{tb: t})
	require.Equal(t, final, w.Clock.Tick)
	got := map[string][2]int{}
	for _, p := range w.Players {
		got[p.Name] = [2]int{p.Secrets, p.Cash}
		assert.Zero(t, p.Bid, p.Name)
	}
	assert.Equal(t, map[string][2]int{"ann": {1, 0}, "bea": {1, 0}, "cid": {0, min - 1}, "dot": {0, 150},
		"eve": {0, min}, "fay": {1, 0}, "gus": {0, min}}, got)
	require.NotEmpty(t, notes)
	assert.Equal(t, game.Note{Tick: final, Text: game.AuctionNews + fmt.Sprintf(
		" 3 Secrets to sealed bids: to ann (FBI) for $650, bea (FBI) for $400, fay (FBI) for $%d. 2 bids lost, the best at $%d.", min+10, min)},
		notes[0])
	// Each feed line says what of the bid was the player's and what the
	// last call added (a player reading "took your bid of $400" placed
	// $300).
	assert.Contains(t, notes, game.Note{Tick: final, PlayerID: 1, Alert: true,
		Text: "The broker took your cash of $650, which the last call bid for you: you hold 1 Secret more, 1 in all. " + game.LastLotNote})
	assert.Contains(t, notes, game.Note{Tick: final, PlayerID: 2, Alert: true,
		Text: "The broker took your bid of $400, with $100 of your cash the last call added: you hold 1 Secret more, 1 in all. " + game.LastLotNote})
	assert.Contains(t, notes, game.Note{Tick: final, PlayerID: 6, Alert: true,
		Text: fmt.Sprintf("The broker took your bid of $%d: you hold 1 Secret more, 1 in all. %s", min+10, game.LastLotNote)})
	assert.Contains(t, notes, game.Note{Tick: final, PlayerID: 7, Alert: true,
		Text: fmt.Sprintf("The broker turned down your bid of $%d, with $%d of your cash the last call added (the lowest taken was $%d); it is back in your cash.",
			min, min-50, min+10)})

	// A lone bidder at the last call, under the reserve: its cash comes back,
	// and the line says the last call bid it.
	w = world(player(1, "ann", min, 0))
	w.Sources = []game.Source{{ID: 1, Name: "a", Secrets: 1, Price: 2 * min, BasePrice: 2 * min}} // a reserve over ann's cash
	w.Clock = round
	w.Clock.Tick = final - 1
	notes = w.Advance(&Dice{tb: t, values: []int{1}}) // the source gains no Secret
	assert.Equal(t, min, w.Players[0].Cash)
	require.Len(t, notes, 2)
	assert.Contains(t, notes[1].Text, fmt.Sprintf("Your cash of $%d, which the last call bid for you, is back in your cash.", min))
}
