package sim

import (
	"github.com/statesecrets/server/game"
)

// Check-in intervals, in 10-minute ticks.
const (
	everyTwoHours = 12
	daily         = 144
)

// Strategies are the named scripts: players who each play one idea (or
// a mix, balanced), most checking in every two hours, two once a day (the
// casual player, who plays the obvious, and the daily raider). Their
// balance is checked at every table size (Check), and the family search
// (Search) looks for a better plan against them.
func Strategies() []Strategy {
	return []Strategy{
		named("turtle", Params{Every: everyTwoHours, Security: 5, Agents: 2, Pay: 100, Trap: true, Answer: true}),
		named("raider", raiderParams),
		{Name: "trader", Every: everyTwoHours, Next: trader},
		{Name: "rumor-monger", Every: everyTwoHours, Next: rumorMonger},
		named("balanced", Params{Every: everyTwoHours, Security: 3, Agents: 4, StealAt: 55, Case: true, Pay: 100, Save: 100, Bid: 100, Trap: true, Answer: true}),
		{Name: "casual", Every: daily, Next: casual},
		named("daily-raider", Params{Every: daily, Security: 1, Agents: 7, StealAt: 40, Case: true, Pay: 100, Answer: true}),
		named("fortress", Params{Every: everyTwoHours, Security: 8, Agents: 2, Pay: 100, Trap: true, Sweep: true}),
		named("bidder", Params{Every: 36, Security: 3, Agents: 2, Pay: 100, Bid: 100, Answer: true}),
		named("sniper", Params{Every: everyTwoHours, Security: 3, Agents: 7, StealAt: 80, Case: true, Pay: 100, Answer: true}),
	}
}

// raiderParams are the raider's: it recruits seven agents, spies on the
// other side's players and steals when the odds are good; between raids
// it buys like anyone, and it answers thefts.
var raiderParams = Params{Every: everyTwoHours, Security: 1, Agents: 7, StealAt: 40, Case: true, Pay: 100, Answer: true}

// named is the member of the family p describes, under a name of its own.
func named(name string, p Params) Strategy {
	s := p.Strategy()
	s.Name = name
	return s
}

// trader offers 60% of the price to cool sources: cheaper Secrets for more
// AP. It leaves a lowball bid with the broker too: the least it takes.
func trader(g *Game, me *game.Player) (game.Action, bool) {
	if a, ok := answer(g, me, everyTwoHours, game.StartSecurity); ok {
		return a, true
	}
	if me.Bid == 0 {
		if a, ok := bidAt(g, me, 60, everyTwoHours); ok {
			return a, true
		}
	}
	if a, ok := buyAt(g, me, 60, 0); ok {
		return a, true
	}
	return idle(me, game.HaggleAP)
}

// rumorMonger chases rumors with all but the AP it needs for one deal, and
// spends the cash on Secrets at the asking price once it has plenty, or
// bids it at the broker's, which takes no AP.
func rumorMonger(g *Game, me *game.Player) (game.Action, bool) {
	if a, ok := answer(g, me, everyTwoHours, game.StartSecurity); ok {
		return a, true
	}
	if me.Cash >= 600 {
		if a, ok := buyCheapest(g, me, 0); ok {
			return a, true
		}
		if a, ok := bidAt(g, me, 150, everyTwoHours); ok {
			return a, true
		}
	}
	if me.AP >= game.RumorAP+game.HaggleAP || me.Cash < 600 && me.AP >= game.RumorAP {
		return game.Action{Kind: game.Rumor}, true
	}
	return game.Action{}, false
}

// casual fortifies a little, chases rumors with the AP it will not need
// for buying, buys at the asking price while the cash lasts, and leaves
// what it did not spend as a bid with the broker.
func casual(g *Game, me *game.Player) (game.Action, bool) {
	if a, ok := answer(g, me, daily, 3); ok {
		return a, true
	}
	if me.Security < 3 && me.Cash >= game.FortifyCost+100 && me.AP >= game.FortifyAP {
		return game.Action{Kind: game.Fortify}, true
	}
	a, ok := buyCheapest(g, me, 0)
	if ok && me.AP > game.HaggleAP*(me.Cash/a.Price) {
		return game.Action{Kind: game.Rumor}, true
	}
	if ok {
		return a, true
	}
	if a, ok := bidAt(g, me, 120, daily); ok {
		return a, true
	}
	return idle(me, 0)
}

// answer is a player's answer to thefts, checking in every so many
// ticks at security: once robbed, it fortifies one point more for each
// Secret stolen, and keeps a trap set and a sweep running (Params.Answer).
func answer(g *Game, me *game.Player, every int64, security int) (game.Action, bool) {
	if g.Robbed(me) == 0 {
		return game.Action{}, false
	}
	return Params{Every: every, Security: security, Answer: true}.defend(g, me)
}

// idle chases a rumor with AP the strategy has no other use for (AP comes
// faster than cash, and unspent AP is lost at the cap), keeping keep AP for
// its own moves.
func idle(me *game.Player, keep int) (game.Action, bool) {
	if me.AP >= keep+game.RumorAP {
		return game.Action{Kind: game.Rumor}, true
	}
	return game.Action{}, false
}

func haggle(s game.Source, offer int) game.Action {
	return game.Action{Kind: game.Haggle, SourceID: s.ID, Offer: offer, Price: s.Price}
}

// buyCheapest offers the asking price to the cheapest source that has a
// Secret, keeping reserve dollars.
func buyCheapest(g *Game, me *game.Player, reserve int) (game.Action, bool) {
	return buyAt(g, me, 100, reserve)
}

// raid goes after the other side's target with the best odds times
// Secrets, among those whose last known security (StartSecurity+2 if never
// seen) gives odds of at least minOdds once cased: it steals on a dossier
// that cases the place (game.Cased), and otherwise spies first (once a
// check-in per target). A blind raider never spies: it steals blind on
// what it last knew, or guessed, when those odds are good enough.
func raid(g *Game, me *game.Player, minOdds float64, blind bool) (game.Action, bool) {
	if me.Agents < 1 || me.AP < game.StealAP || g.Tick() < me.LieLowUntil {
		return game.Action{}, false
	}
	var best *game.Player
	bestValue, bestFresh := 0.0, false
	cheapest := game.Cheapest(g.World.Sources, g.Tick())
	for i := range g.World.Players {
		q := &g.World.Players[i]
		if q.Faction == me.Faction || q.Protected(g.Tick()) || !game.CanStealFrom(me.Secrets, q.Secrets, me.Cash+me.Bid, cheapest) {
			continue
		}
		known := game.Player{Security: game.StartSecurity + 2}
		if in, seen := g.Intel[me.Faction][q.ID]; seen {
			known = in.Player
		}
		fresh := g.Cased(me, q.ID)
		odds := game.OddsOf(game.Steal, me.Agents, known, fresh || !blind, g.Tick(), len(g.World.Players)).Chance
		fresh = fresh || blind
		if odds < minOdds || !fresh && g.spied[spyKey{me.ID, q.ID}] == g.Tick() {
			continue
		}
		if v := odds * float64(q.Secrets); best == nil || v > bestValue {
			best, bestValue, bestFresh = q, v, fresh
		}
	}
	switch {
	case best == nil:
		return game.Action{}, false
	case bestFresh:
		return game.Action{Kind: game.Steal, TargetID: best.ID}, true
	case me.AP >= game.SpyAP+game.StealAP:
		g.spied[spyKey{me.ID, best.ID}] = g.Tick()
		return game.Action{Kind: game.Spy, TargetID: best.ID}, true
	}
	return game.Action{}, false
}

// endgame is what every strategy does at its last check-in of the round:
// cash is worth nothing once the round ends (it breaks no tie), so it
// buys Secrets at the asking price while it can.
func endgame(g *Game, me *game.Player, every int64) (game.Action, bool) {
	if g.World.Clock.RoundEnd()-g.Tick() > every {
		return game.Action{}, false
	}
	return buyCheapest(g, me, 0)
}
