package game

import (
	"fmt"
	"strings"
)

// The defender's moves, each with its counter: a trap catches thieves who
// go in blind (casing the place first steps around it), a sweep makes
// spying harder and names every spy (going in blind skips the spying).
const (
	// TrapAP and TrapCost set a trap. It stays set until a thief going in
	// blind (see Cased) springs it: that theft is rolled against
	// TrapDefence more, and a thief who fails loses TrapCatch agents more
	// than the one a failed theft costs, and is named even if it works. A
	// thief who cased the place steps around it and leaves it set.
	TrapAP, TrapCost       = 1, 60
	TrapDefence, TrapCatch = 2, 1
	// SweepAP and SweepCost run a counter-intelligence sweep for
	// SweepTicks ticks: every spy against the player is rolled against
	// SweepDefence more, and named to them even when it works.
	SweepAP, SweepCost = 1, 60
	SweepTicks         = 144
	SweepDefence       = 1
)

// Sweeping reports whether p's counter-intelligence sweep runs at tick now.
func (p Player) Sweeping(now int64) bool { return now < p.SweepUntil }

func setTrap(t *Turn) (Result, error) {
	if t.Actor.Trap {
		return Result{}, Errorf(EINVALID, "Your trap is set already; it stays set until a thief springs it.")
	}
	if err := buy(t.Actor, TrapAP, TrapCost, "setting a trap"); err != nil {
		return Result{}, err
	}
	t.Actor.Trap = true
	return t.result(fmt.Sprintf("You set a trap for $%d: the next thief who comes in blind faces %d more and loses %d more agent%s if caught.",
		TrapCost, TrapDefence, TrapCatch, plural(TrapCatch))), nil
}

func sweep(t *Turn) (Result, error) {
	if err := buy(t.Actor, SweepAP, SweepCost, "a counter-intelligence sweep"); err != nil {
		return Result{}, err
	}
	p := t.Actor
	p.SweepUntil = max(p.SweepUntil, t.Tick) + SweepTicks
	return t.result(fmt.Sprintf("Counter-intelligence sweeps your office until tick %d: spies face %d more, and you learn who sent each.",
		p.SweepUntil, SweepDefence)), nil
}

// Odds is what a spy or steal order is rolled at, and why: the actor's
// agents and a die against Defence and the target's die, ties to the
// target. The order and the buttons that give it compute it with OddsOf.
type Odds struct {
	Kind     ActionKind // Spy or Steal
	Agents   int        // the actor's
	Security int        // the target's
	// Times is how many times Security counts: DuoSecurity for a theft
	// at a table of DuoTable players, 1 otherwise.
	Times   int
	Blind   bool    // a theft without a fresh dossier (Cased): +BlindDefence
	Trap    bool    // a blind theft into a set trap: +TrapDefence
	Sweep   bool    // a spy into a running sweep: +SweepDefence
	Defence int     // Security (Times over) and the additions above
	Chance  float64 // of success, 0..1
	// Guess: the target's security is a guess (StartSecurity), the
	// player holding no dossier on them (Dossier.Odds).
	Guess bool
}

// OddsOf returns the odds of kind (Spy or Steal) by a player running
// agents against target at tick, in a game of players players (a theft
// at a table of DuoTable faces the security DuoSecurity times), cased
// saying whether the actor's side holds a fresh dossier on target
// (Cased). The order uses the target as it is; a page showing the odds
// beforehand uses what the player knows of the target (their dossier's
// security, trap and sweep), so the two agree whenever the dossier is
// still true.
func OddsOf(kind ActionKind, agents int, target Player, cased bool, tick int64, players int) Odds {
	o := Odds{Kind: kind, Agents: agents, Security: target.Security, Times: 1}
	switch kind {
	case Steal:
		if players == DuoTable {
			o.Times = DuoSecurity
		}
		o.Blind = !cased
		o.Trap = o.Blind && target.Trap
	case Spy:
		o.Sweep = target.Sweeping(tick)
	}
	o.Defence = o.Security * o.Times
	if o.Blind {
		o.Defence += BlindDefence
	}
	if o.Trap {
		o.Defence += TrapDefence
	}
	if o.Sweep {
		o.Defence += SweepDefence
	}
	o.Chance = contest(agents, o.Defence)
	return o
}

// Why spells out the defence: "security 2 + 3 going in blind + 2 for a
// trap"; a guessed security is "security 1 (a guess)", one counted twice
// (Times) "security 2 ×2 head to head".
func (o Odds) Why() string {
	var b strings.Builder
	fmt.Fprintf(&b, "security %d", o.Security)
	if o.Guess {
		b.WriteString(" (a guess)")
	}
	if o.Times > 1 {
		fmt.Fprintf(&b, " ×%d head to head", o.Times)
	}
	if o.Blind {
		fmt.Fprintf(&b, " + %d going in blind", BlindDefence)
	}
	if o.Trap {
		fmt.Fprintf(&b, " + %d for a trap", TrapDefence)
	}
	if o.Sweep {
		fmt.Fprintf(&b, " + %d for a sweep", SweepDefence)
	}
	return b.String()
}

// Odds returns the odds of kind (Spy or Steal) against the dossier's
// target by viewer (with viewer's agents) at tick in a game of players
// players (Store.Players; the order has the Turn's), as far as viewer may
// know them (KnownFigure, the rules on information): from the dossier's
// security, trap and sweep (Odds.Guess: the starting security, no trap
// and no sweep, without a dossier), cased when the dossier is fresh
// (Cased). It is the order's own function (OddsOf) on what the dossier
// shows, so a page shows the odds the order is rolled at whenever the
// dossier is still true, and reveals nothing the viewer's side did not
// find.
func (d Dossier) Odds(viewer *Player, kind ActionKind, tick int64, players int) Odds {
	known := Player{Security: StartSecurity}
	if sec, ok := KnownFigure(viewer, &d, FigureSecurity); ok {
		trap, _ := KnownFigure(viewer, &d, FigureTrap)
		sweep, _ := KnownFigure(viewer, &d, FigureSweep)
		known = Player{Security: sec, Trap: trap == 1, SweepUntil: int64(sweep)}
	}
	o := OddsOf(kind, viewer.Agents, known, d.Known && Cased(d.Tick, tick), tick, players)
	o.Guess = !d.Known
	return o
}
