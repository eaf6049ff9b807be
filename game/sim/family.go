package sim

import (
	"fmt"
	"strings"

	"github.com/statesecrets/server/game"
)

// Params describe one member of a family of strategies, a handful of
// choices a player makes: how often it checks in, how it defends, how it
// attacks, what it pays and how much it saves. The named scripts
// (Strategies) are a few hand-picked players; the search (Search) walks
// the family for the member that wins most against them.
type Params struct {
	Every    int64 // ticks between check-ins (12: every two hours; 144: once a day)
	Security int   // it fortifies up to this security
	Agents   int   // it recruits up to this many agents
	// StealAt is the least chance, in percent, at which it steals; 0: it
	// never steals. Case: it spies first, to steal with a fresh dossier
	// (game.Cased); false: it goes in blind.
	StealAt int
	Case    bool
	// Pay is its offer to a source, in percent of the asking price (100:
	// a sure deal; less: a cheaper chance, see game.HaggleOdds).
	Pay int
	// Save is the cash, in dollars, it keeps back from sources until its
	// last check-in of the round.
	Save int
	// Bid is what it bids at the broker's auction, after it has bought
	// what it would, at its last check-in before the auction (bidAt): in
	// percent of the sources' mean asking price, as far as its cash goes
	// (0: it never bids).
	Bid int
	// Trap: it keeps a trap set once it holds a Secret; Sweep: it keeps
	// a counter-intelligence sweep running.
	Trap, Sweep bool
	// Answer: once robbed, it fortifies one point more for each Secret
	// stolen from it, and keeps a trap set and a sweep running.
	Answer bool
}

// Strategy returns the member of the family p describes, named by Name.
func (p Params) Strategy() Strategy {
	return Strategy{Name: p.Name(), Every: p.Every, Next: p.next, Params: &p}
}

// Name spells p out, short: "every 12, security 3, agents 4, steal 60%
// cased, pay 100%, save $0".
func (p Params) Name() string {
	var b strings.Builder
	fmt.Fprintf(&b, "every %d, security %d, agents %d, ", p.Every, p.Security, p.Agents)
	switch {
	case p.StealAt == 0:
		b.WriteString("no steals, ")
	case p.Case:
		fmt.Fprintf(&b, "steal %d%% cased, ", p.StealAt)
	default:
		fmt.Fprintf(&b, "steal %d%% blind, ", p.StealAt)
	}
	fmt.Fprintf(&b, "pay %d%%, save $%d, bid %d%%", p.Pay, p.Save, p.Bid)
	if p.Trap {
		b.WriteString(", trap")
	}
	if p.Sweep {
		b.WriteString(", sweep")
	}
	if p.Answer {
		b.WriteString(", answers thefts")
	}
	return b.String()
}

// next is the family's script: defend, arm, raid, buy, bid, and chase
// rumors with whatever AP is left.
func (p Params) next(g *Game, me *game.Player) (game.Action, bool) {
	if a, ok := p.defend(g, me); ok {
		return a, true
	}
	if me.Agents < p.Agents && me.Cash >= game.RecruitCost+p.Save && me.AP >= game.RecruitAP {
		return game.Action{Kind: game.Recruit}, true
	}
	if p.StealAt > 0 {
		if a, ok := raid(g, me, float64(p.StealAt)/100, !p.Case); ok {
			return a, true
		}
	}
	if a, ok := buyAt(g, me, p.Pay, p.Save); ok {
		return a, true
	}
	if a, ok := bidAt(g, me, p.Bid, p.Every); ok {
		return a, true
	}
	keep := 0
	if p.StealAt > 0 {
		keep = game.SpyAP + game.StealAP
	}
	return idle(me, keep)
}

// defend fortifies up to the player's security and keeps its trap set
// and its sweep running, as p says; one that answers thefts adds to all
// three once robbed.
func (p Params) defend(g *Game, me *game.Player) (game.Action, bool) {
	security, trap, sweep := p.Security, p.Trap, p.Sweep
	if robbed := g.Robbed(me); p.Answer && robbed > 0 {
		security, trap, sweep = min(security+robbed, 8), true, true
	}
	switch {
	case me.Security < security && me.Cash >= game.FortifyCost+p.Save && me.AP >= game.FortifyAP:
		return game.Action{Kind: game.Fortify}, true
	case trap && !me.Trap && me.Secrets > 0 && me.Cash >= game.TrapCost && me.AP >= game.TrapAP:
		return game.Action{Kind: game.Trap}, true
	case sweep && me.SweepUntil < g.Tick()+p.Every && me.Cash >= game.SweepCost && me.AP >= game.SweepAP:
		return game.Action{Kind: game.Sweep}, true
	}
	return game.Action{}, false
}

// bidAt bids pay percent of the sources' mean asking price (GrandLot
// times that for the mid-week lot; as far as the player's cash and bid
// held go) at the broker's next auction, unless it bids that already or
// it comes under the broker's least bid. A player checking in every so
// many ticks bids only at its last check-in before the auction: the cash
// of a bid counts toward the cash cap (game.MaxCash), so a bid held all
// day is pay lost.
func bidAt(g *Game, me *game.Player, pay int, every int64) (game.Action, bool) {
	if pay == 0 || len(g.World.Sources) == 0 || game.NextAuction(g.World.Clock, g.Tick()+1)-g.Tick() > every {
		return game.Action{}, false
	}
	sum := 0
	for _, s := range g.World.Sources {
		sum += s.Price
	}
	offer := sum * pay / 100 / len(g.World.Sources)
	if c := g.World.Clock; game.NextAuction(c, g.Tick()+1) == game.GrandAuction(c) {
		offer *= game.GrandLot // the mid-week lot is worth as many Secrets
	}
	offer = min(me.Cash+me.Bid, offer)
	if offer < game.AuctionMinBid || offer == me.Bid {
		return game.Action{}, false
	}
	return game.Action{Kind: game.Bid, Offer: offer}, true
}

// buyAt offers pay percent of the asking price to the cheapest source
// with a Secret to sell whose price the player can pay keeping reserve
// dollars; below the asking price it passes over sources a refusal would
// burn.
func buyAt(g *Game, me *game.Player, pay, reserve int) (game.Action, bool) {
	if me.AP < game.HaggleAP {
		return game.Action{}, false
	}
	best := -1
	for i, s := range g.World.Sources {
		offer := max(1, s.Price*pay/100)
		if s.Burned(g.Tick()) || s.Secrets < 1 || offer+reserve > me.Cash ||
			pay < 100 && s.Heat+game.HaggleFailHeat >= game.BurnHeat {
			continue
		}
		if best < 0 || s.Price < g.World.Sources[best].Price {
			best = i
		}
	}
	if best < 0 {
		return game.Action{}, false
	}
	s := g.World.Sources[best]
	return haggle(s, max(1, s.Price*pay/100)), true
}

// Space is the values Search tries for each of Params' fields.
type Space struct {
	Every    []int64
	Security []int
	Agents   []int
	StealAt  []int
	Case     []bool
	Pay      []int
	Save     []int
	Bid      []int
	Trap     []bool
	Sweep    []bool
	Answer   []bool
}

// DefaultSpace is the family Search walks by default.
func DefaultSpace() Space {
	return Space{
		Every:    []int64{12, 36, 72, daily},
		Security: []int{1, 3, 5, 8},
		Agents:   []int{1, 2, 4, 7},
		StealAt:  []int{0, 40, 60, 80},
		Case:     []bool{true, false},
		Pay:      []int{60, 80, 100},
		Save:     []int{0, 300, 800},
		Bid:      []int{0, 60, 100, 150, 250},
		Trap:     []bool{false, true},
		Sweep:    []bool{false, true},
		Answer:   []bool{false, true},
	}
}

// dims returns how many values each of the space's fields has, in Params'
// field order.
func (s Space) dims() []int {
	return []int{len(s.Every), len(s.Security), len(s.Agents), len(s.StealAt), len(s.Case), len(s.Pay), len(s.Save),
		len(s.Bid), len(s.Trap), len(s.Sweep), len(s.Answer)}
}

// at returns the Params of the point whose field i takes value x[i].
func (s Space) at(x []int) Params {
	return Params{Every: s.Every[x[0]], Security: s.Security[x[1]], Agents: s.Agents[x[2]], StealAt: s.StealAt[x[3]],
		Case: s.Case[x[4]], Pay: s.Pay[x[5]], Save: s.Save[x[6]], Bid: s.Bid[x[7]], Trap: s.Trap[x[8]], Sweep: s.Sweep[x[9]],
		Answer: s.Answer[x[10]]}
}

// near returns the point of the space nearest p: for each field, the
// value closest to p's (the first of two as close).
func (s Space) near(p Params) []int {
	return []int{
		nearest(s.Every, p.Every), nearest(s.Security, p.Security), nearest(s.Agents, p.Agents),
		nearest(s.StealAt, p.StealAt), nearestBool(s.Case, p.Case), nearest(s.Pay, p.Pay), nearest(s.Save, p.Save),
		nearest(s.Bid, p.Bid), nearestBool(s.Trap, p.Trap), nearestBool(s.Sweep, p.Sweep), nearestBool(s.Answer, p.Answer),
	}
}

func nearest[T int | int64](vs []T, v T) int {
	best := 0
	for i, w := range vs {
		if abs(w-v) < abs(vs[best]-v) {
			best = i
		}
	}
	return best
}

func nearestBool(vs []bool, v bool) int {
	for i, w := range vs {
		if w == v {
			return i
		}
	}
	return 0
}

func abs[T int | int64](v T) T { return max(v, -v) }
