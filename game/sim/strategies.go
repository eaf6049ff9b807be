package sim

import (
	"github.com/statesecrets/server/game"
)

// Check-in intervals, in 10-minute ticks.
const (
	everyTwoHours = 12
	daily         = 144
)

// Strategies are the scripted players: five who check in every two hours
// and play one idea each (or a mix, balanced), and a casual player who checks
// in once a day and plays the obvious: some security, buy, chase rumors.
func Strategies() []Strategy {
	return []Strategy{
		{Name: "turtle", Every: everyTwoHours, Next: turtle},
		{Name: "raider", Every: everyTwoHours, Next: raider},
		{Name: "trader", Every: everyTwoHours, Next: trader},
		{Name: "rumor-monger", Every: everyTwoHours, Next: rumorMonger},
		{Name: "balanced", Every: everyTwoHours, Next: balanced},
		{Name: "casual", Every: daily, Next: casual},
	}
}

// turtle fortifies first, then buys Secrets at the asking price from the
// cheapest source, and chases rumors with AP it cannot spend otherwise.
func turtle(g *Game, me *game.Player) (game.Action, bool) {
	if me.Security < 5 && me.Cash >= game.FortifyCost+50 && me.AP >= game.FortifyAP {
		return game.Action{Kind: game.Fortify}, true
	}
	if a, ok := buyCheapest(g, me, 0); ok {
		return a, true
	}
	return idle(me, game.HaggleAP)
}

// raider recruits, spies on the richest players of the other side and steals
// from them when the odds are good; between raids it buys like anyone.
func raider(g *Game, me *game.Player) (game.Action, bool) { return raiderBy(g, me, false) }

// blindRaider is the raider who never spies (WithBlindRaider).
func blindRaider(g *Game, me *game.Player) (game.Action, bool) { return raiderBy(g, me, true) }

func raiderBy(g *Game, me *game.Player, blind bool) (game.Action, bool) {
	if me.Agents < 7 && me.Cash >= game.RecruitCost && me.AP >= game.RecruitAP {
		return game.Action{Kind: game.Recruit}, true
	}
	if a, ok := raid(g, me, 0.4, blind); ok {
		return a, true
	}
	if a, ok := buyCheapest(g, me, 0); ok {
		return a, true
	}
	return idle(me, game.SpyAP+game.StealAP)
}

// trader offers 60% of the price to cool sources: cheaper Secrets for more AP.
func trader(g *Game, me *game.Player) (game.Action, bool) {
	if me.AP < game.HaggleAP {
		return game.Action{}, false
	}
	best, bestPrice := -1, 0
	for i, s := range g.World.Sources {
		offer := s.Price * 6 / 10
		if s.Burned(g.Tick()) || s.Secrets < 1 || offer > me.Cash || s.Heat+game.HaggleFailHeat >= game.BurnHeat {
			continue
		}
		if best < 0 || s.Price < bestPrice {
			best, bestPrice = i, s.Price
		}
	}
	if best < 0 {
		return idle(me, game.HaggleAP)
	}
	s := g.World.Sources[best]
	return haggle(s, s.Price*6/10), true
}

// rumorMonger chases rumors with all but the AP it needs for one deal, and
// spends the cash on Secrets at the asking price once it has plenty.
func rumorMonger(g *Game, me *game.Player) (game.Action, bool) {
	if me.Cash >= 600 {
		if a, ok := buyCheapest(g, me, 0); ok {
			return a, true
		}
	}
	if me.AP >= game.RumorAP+game.HaggleAP || me.Cash < 600 && me.AP >= game.RumorAP {
		return game.Action{Kind: game.Rumor}, true
	}
	return game.Action{}, false
}

// balanced keeps some security and a few agents, buys while its cash
// lasts (keeping enough to replace an agent), and steals with the AP left
// when the odds are good.
func balanced(g *Game, me *game.Player) (game.Action, bool) {
	if me.Security < 3 && me.Cash >= game.FortifyCost+100 && me.AP >= game.FortifyAP {
		return game.Action{Kind: game.Fortify}, true
	}
	if me.Agents < 4 && me.Cash >= game.RecruitCost+100 && me.AP >= game.RecruitAP {
		return game.Action{Kind: game.Recruit}, true
	}
	if a, ok := buyCheapest(g, me, game.RecruitCost); ok {
		return a, true
	}
	if a, ok := raid(g, me, 0.55, false); ok {
		return a, true
	}
	return idle(me, game.SpyAP+game.StealAP)
}

// casual fortifies a little, chases rumors with the AP it will not need
// for buying, and buys at the asking price while the cash lasts.
func casual(g *Game, me *game.Player) (game.Action, bool) {
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
	return idle(me, 0)
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
	if me.AP < game.HaggleAP {
		return game.Action{}, false
	}
	best := -1
	for i, s := range g.World.Sources {
		if s.Burned(g.Tick()) || s.Secrets < 1 || s.Price+reserve > me.Cash {
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
	return haggle(s, s.Price), true
}

// raid goes after the other side's target with the best odds times
// Secrets, among those whose last known security (StartSecurity+2 if never
// seen) gives odds of at least minOdds once cased: it steals on a dossier
// that cases the place (game.Cased), and otherwise spies first (once a
// check-in per target). A blind raider never spies: it steals blind on
// what it last knew, or guessed, when those odds are good enough.
func raid(g *Game, me *game.Player, minOdds float64, blind bool) (game.Action, bool) {
	if me.Agents < 1 || me.AP < game.StealAP {
		return game.Action{}, false
	}
	var best *game.Player
	bestValue, bestFresh := 0.0, false
	for i := range g.World.Players {
		q := &g.World.Players[i]
		if q.Faction == me.Faction || q.Protected(g.Tick()) || !game.CanStealFrom(me.Secrets, q.Secrets) {
			continue
		}
		in, seen := g.Intel[me.Faction][q.ID]
		security := game.StartSecurity + 2
		if seen {
			security = in.Security
		}
		fresh := g.Cased(me, q.ID)
		odds := game.StealOdds(me.Agents, security, fresh || !blind)
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
