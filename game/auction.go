package game

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The broker's auction: once a day the broker sells Secrets to the best
// sealed bids, which cost no AP. It is where cash buys Secrets without
// AP, so that what to pay is a choice every day.
const (
	// AuctionTicks is the length of an auction day, in ticks: the broker
	// sells on the last tick of each (a day at the default tick), and on
	// the round's last tick but one whatever its length.
	AuctionTicks = 144
	// AuctionMinBid is the least bid the broker takes, in dollars.
	AuctionMinBid = 200
	// AuctionShare: the broker sells one Secret for every AuctionShare
	// bids it holds, rounded up, so that at least every other bidder goes
	// home empty-handed and a bid is a guess at the others'. A lone bid
	// buys only at the reserve (AuctionReserve) or more: without a rival
	// bid the broker sells no cheaper than the sources do.
	AuctionShare = 2
	// GrandLot: mid-week (GrandAuction) the broker sells a single lot of
	// this many Secrets to the best bid: the week's one prize worth
	// saving for.
	GrandLot = 3
)

// AuctionNews begins the news line of every auction (Store.LastAuction
// finds it so).
const AuctionNews = "The broker sold"

// AuctionDue reports whether the broker sells at tick, in the round c
// describes: on the last tick of each AuctionTicks-tick day of the round,
// and on the round's last tick but one (the last, RoundEnd, starts the
// next round), so that the round's last auction is the decider of the
// last day.
func AuctionDue(c Clock, tick int64) bool {
	if tick <= c.RoundStart || tick >= c.RoundEnd() {
		return false
	}
	return tick == c.RoundEnd()-1 || (tick-c.RoundStart)%AuctionTicks == AuctionTicks-1
}

// NextAuction returns the tick of the broker's next auction at or after
// tick, in the round c describes.
func NextAuction(c Clock, tick int64) int64 {
	next := max(tick, c.RoundStart+1)
	next += AuctionTicks - 1 - (next-c.RoundStart)%AuctionTicks
	return min(next, c.RoundEnd()-1)
}

// GrandAuction returns the tick of the round's grand auction (GrandLot):
// the first auction at or after the middle of the round c describes.
func GrandAuction(c Clock) int64 { return NextAuction(c, c.RoundStart+c.RoundTicks/2) }

// AuctionLots returns how many Secrets the broker sells to bids bids: one
// per AuctionShare of them, rounded up.
func AuctionLots(bids int) int { return (bids + AuctionShare - 1) / AuctionShare }

// AuctionReserve returns the least a lone bid must offer for the broker
// to sell to it: the sources' mean asking price, in dollars, rounded up
// (GrandLot times that for the grand auction's lot); 0 without sources.
func AuctionReserve(sources []Source, grand bool) int {
	if len(sources) == 0 {
		return 0
	}
	sum := 0
	for _, o := range sources {
		sum += o.Price
	}
	r := (sum + len(sources) - 1) / len(sources)
	if grand {
		r *= GrandLot
	}
	return r
}

// bid places, changes or withdraws (offer 0) the actor's bid at the next
// auction. The cash of a bid is set aside at once, so a bid the broker
// accepts is always covered; a changed bid gives back the old one's.
func bid(t *Turn, offer int) (Result, error) {
	p := t.Actor
	switch {
	case offer == 0 && p.Bid == 0:
		return Result{}, Errorf(EINVALID, "You hold no bid to withdraw.")
	case offer != 0 && offer < AuctionMinBid:
		return Result{}, Errorf(EINVALID, "The broker takes bids of $%d or more; you bid $%d.", AuctionMinBid, offer)
	case offer > p.Cash+p.Bid:
		return Result{}, Errorf(EINVALID, "You bid $%d but have only $%d (with the $%d of your bid).", offer, p.Cash+p.Bid, p.Bid)
	}
	p.Cash += p.Bid - offer
	p.Bid, p.BidTick = offer, t.Tick
	if offer == 0 {
		return t.result("You withdrew your bid; the broker gave your cash back."), nil
	}
	return t.result(fmt.Sprintf("Your sealed bid of $%d is with the broker, set aside from your cash until the auction.", offer)), nil
}

// LastLotNote ends the feed line of a player who bought a Secret at the
// round's last auction (Player.LastLot), which breaks a tie (Rank).
const LastLotNote = "Bought at the round's last auction, it places you ahead of anyone level with you on Secrets when the round ends."

// lastCall bids, at the round's last auction at tick, LastAuctionCashPercent
// of each player's cash for them: added to the bid they hold (which keeps
// its tick), or a bid of its own at tick, when the two come to
// AuctionMinBid or more. Cash left when the round ends counts for nothing,
// and a player who checks in once a day has its last day's pay come after
// its last visit: the broker spends it as the player would have. It
// returns the dollars it bid for each player, by id (auction's called).
func lastCall(tick int64, players []Player) map[int64]int {
	called := map[int64]int{}
	for i := range players {
		p := &players[i]
		cash := p.Cash * LastAuctionCashPercent / 100
		if cash <= 0 || p.Bid+cash < AuctionMinBid {
			continue
		}
		if p.Bid == 0 {
			p.BidTick = tick
		}
		p.Bid += cash
		p.Cash -= cash
		called[p.ID] = cash
	}
	return called
}

// yourBid is "your bid of $N", and what of it the round's last call bid
// for the player (called, by id; see lastCall).
func yourBid(p *Player, called map[int64]int) string {
	switch c := called[p.ID]; {
	case c == 0:
		return fmt.Sprintf("your bid of $%d", p.Bid)
	case c == p.Bid:
		return fmt.Sprintf("your cash of $%d, which the last call bid for you", p.Bid)
	default:
		return fmt.Sprintf("your bid of $%d, with $%d of your cash the last call added", p.Bid, c)
	}
}

// auction sells the broker's lots to the best of the bids players hold,
// at tick: each winner pays their own bid (set aside already) and gains a
// Secret (all GrandLot of the grand auction's single lot); every other bid
// is given back. Bids level on dollars go to the earlier, then to the
// lower id. It returns the news line and each bidder's feed line, which
// says what of the bid the round's last call added (called, by id; nil
// at any other auction), and leaves no bid standing.
func auction(tick int64, players []Player, grand bool, reserve int, called map[int64]int) []Note {
	var bidders []*Player
	for i := range players {
		if players[i].Bid > 0 {
			bidders = append(bidders, &players[i])
		}
	}
	if len(bidders) == 0 {
		return nil
	}
	slices.SortStableFunc(bidders, func(a, b *Player) int {
		return cmp.Or(cmp.Compare(b.Bid, a.Bid), cmp.Compare(a.BidTick, b.BidTick), cmp.Compare(a.ID, b.ID))
	})
	if len(bidders) == 1 && bidders[0].Bid < reserve {
		return noSale(tick, bidders[0], reserve, grand, called)
	}
	lots, size := AuctionLots(len(bidders)), 1
	if grand {
		lots, size = 1, GrandLot
	}
	var sold []string
	var notes []Note
	for i, p := range bidders {
		if i < lots {
			p.Secrets += size
			p.LastLot = called != nil // the round's last auction (lastCall)
			sold = append(sold, fmt.Sprintf("%s for $%d", p.Label(), p.Bid))
			text := fmt.Sprintf("The broker took %s: you hold %s more, %d in all.", yourBid(p, called), secrets(size), p.Secrets)
			if p.LastLot {
				text += " " + LastLotNote
			}
			notes = append(notes, Note{Tick: tick, PlayerID: p.ID, Alert: true, Text: text})
			continue
		}
		p.Cash += p.Bid
		notes = append(notes, Note{Tick: tick, PlayerID: p.ID, Alert: true, Text: fmt.Sprintf(
			"The broker turned down %s (the lowest taken was $%d); it is back in your cash.",
			yourBid(p, called), bidders[lots-1].Bid)})
	}
	what := fmt.Sprintf("%d Secret%s to sealed bids", lots, plural(lots))
	if grand {
		what = fmt.Sprintf("its mid-week lot of %s to the best sealed bid", secrets(size))
	}
	news := fmt.Sprintf("%s %s: to %s.", AuctionNews, what, strings.Join(sold, ", "))
	if lost := len(bidders) - lots; lost > 0 {
		news += fmt.Sprintf(" %d bid%s lost, the best at $%d.", lost, plural(lost), bidders[lots].Bid)
	}
	for _, p := range bidders {
		p.Bid, p.BidTick = 0, 0
	}
	return append([]Note{{Tick: tick, Text: news}}, notes...)
}

// noSale gives a lone bid under the reserve back. The grand auction's
// reserve is for its lot (GrandLot times the mean price), and the lines
// say so: "under its reserve of $2034" alone read as the price of one
// Secret, three times any source's.
func noSale(tick int64, p *Player, reserve int, grand bool, called map[int64]int) []Note {
	what, mean := "", "the sources' mean price"
	if grand {
		what = " for its mid-week lot of " + secrets(GrandLot)
		mean = fmt.Sprintf("%d times the sources' mean price, for the lot of %s", GrandLot, secrets(GrandLot))
	}
	back := fmt.Sprintf("Your $%d", p.Bid)
	if called[p.ID] > 0 {
		back = upper(yourBid(p, called)) + ","
	}
	notes := []Note{{Tick: tick, Text: fmt.Sprintf("%s nothing: a lone sealed bid, under its reserve of $%d%s.", AuctionNews, reserve, what)},
		{Tick: tick, PlayerID: p.ID, Alert: true, Text: fmt.Sprintf(
			"The broker sold nothing: yours was the only bid, and a lone bid buys only at the reserve, $%d (%s). %s is back in your cash.",
			reserve, mean, back)}}
	p.Cash += p.Bid
	p.Bid, p.BidTick = 0, 0
	return notes
}

// secrets is "1 Secret" or "n Secrets".
func secrets(n int) string { return fmt.Sprintf("%d Secret%s", n, plural(n)) }

// LastCallTicks is how near its end a round is on its last call: within a
// day of ticks (an auction day), the round ends before a player who checks
// in once a day comes back, so HQ tells them it is their last chance to
// spend (Clock.LastCall).
const LastCallTicks = AuctionTicks

// LastCall reports whether the round c describes ends within LastCallTicks
// of its tick.
func (c Clock) LastCall() bool { return c.RoundEnd()-c.Tick <= LastCallTicks }

// upper is s with its first letter upper-case (ASCII).
func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
