package game

import (
	"fmt"
	"strconv"
	"strings"
)

// haggle offers offer dollars for one of t.Source's Secrets. The deal goes
// through with probability offer/price (capped at 1) and costs
// min(offer, price) and HaggleAP; a refusal costs HaggleFailPercent of the
// offer (rounded up) and only HaggleFailAP. Every deal but a lowball (a
// refused offer under 1/LowballShare of the price) may burn the source:
// the chance is its heat, in percent, before the deal; a sale then heats
// it by HaggleWinHeat, a refusal by HaggleFailHeat. seen is the price the
// player saw (0: not checked): if the price has risen since and the offer
// no longer covers it, the haggle is refused, so the odds are never worse
// than the ones the player chose. A price that fell only makes the offer
// better: it stands.
func haggle(t *Turn, offer, seen int) (Result, error) {
	if err := checkHaggle(t, offer, seen); err != nil {
		return Result{}, err
	}
	s := t.Source
	heat := s.Heat
	var r Result
	if t.Rand.IntN(s.Price) < offer {
		t.Actor.AP -= HaggleAP
		r = haggleWon(t, offer)
	} else {
		t.Actor.AP -= HaggleFailAP
		if r = haggleLost(t, offer); LowballShare*offer < s.Price {
			return r, nil
		}
	}
	if heat > 0 && t.Rand.IntN(BurnHeat) < heat {
		burn(t, &r)
	}
	return r, nil
}

func checkHaggle(t *Turn, offer, seen int) error {
	s := t.Source
	if err := needAP(t.Actor, HaggleAP, "haggling"); err != nil {
		return err
	}
	if offer < 1 {
		return Errorf(EINVALID, "Make an offer of at least $1.")
	}
	if offer > t.Actor.Cash {
		return Errorf(EINVALID, "You offered $%d but have only $%d.", offer, t.Actor.Cash)
	}
	if s.Burned(t.Tick) {
		return Errorf(EINVALID, "%s is burned and lying low until tick %d.", s.Name, s.BurnedUntil)
	}
	if s.Secrets < 1 {
		return Errorf(EINVALID, "%s has no Secrets to sell right now; try after the next tick.", s.Name)
	}
	if seen > 0 && s.Price > seen && offer < s.Price {
		return priceRose(s, seen, offer)
	}
	return nil
}

// priceRose is the refusal of an offer of offer dollars made at the price
// seen, which has since risen past it: the new price and odds, against the
// old ones, told apart however small the change.
func priceRose(s *Source, seen, offer int) error {
	const next = " Nothing was spent; offer again if you still want it."
	was, now := HaggleOdds(offer, seen), HaggleOdds(offer, s.Price)
	if was == 1 {
		return Errorf(EINVALID, "%s's price rose from $%d to $%d since you looked: your $%d offer is no longer a sure deal, "+
			"it would now have %s odds."+next, s.Name, seen, s.Price, offer, Percent(now))
	}
	from, to := percents(was, now)
	return Errorf(EINVALID, "%s's price rose from $%d to $%d since you looked: the odds of your $%d offer fell from %s to %s."+next,
		s.Name, seen, s.Price, offer, from, to)
}

// HaggleOdds returns the chance, 0..1, that an offer of offer dollars buys a
// Secret from a source asking price.
func HaggleOdds(offer, price int) float64 {
	if price <= 0 || offer >= price {
		return 1
	}
	return float64(max(0, offer)) / float64(price)
}

// Percent formats a chance 0..1 as a whole percentage, "0%" to "100%",
// never rounding a possible event to 0% or a doubtful one to 100%.
func Percent(p float64) string {
	n := int(p*100 + 0.5)
	switch {
	case p > 0 && n == 0:
		n = 1
	case p < 1 && n == 100:
		n = 99
	}
	return fmt.Sprintf("%d%%", n)
}

// percents formats two different chances as Percent does, with as many
// decimals as it takes (up to two) for them to read differently: "60%" and
// "59%", or "60.0%" and "59.7%", never "60%" and "60%".
func percents(a, b float64) (string, string) {
	pa, pb := Percent(a), Percent(b)
	for decimals := 1; pa == pb && decimals <= 2; decimals++ {
		pa, pb = percentTo(a, decimals), percentTo(b, decimals)
	}
	return pa, pb
}

// percentTo formats a chance 0..1 as a percentage with decimals places,
// never rounding a possible event to 0 or a doubtful one to 100.
func percentTo(p float64, decimals int) string {
	s := strconv.FormatFloat(p*100, 'f', decimals, 64)
	if z := strconv.FormatFloat(0, 'f', decimals, 64); p > 0 && s == z {
		s = "0." + strings.Repeat("0", decimals-1) + "1"
	} else if h := strconv.FormatFloat(100, 'f', decimals, 64); p < 1 && s == h {
		s = "99." + strings.Repeat("9", decimals)
	}
	return s + "%"
}

func haggleWon(t *Turn, offer int) Result {
	s, p := t.Source, t.Actor
	paid := min(offer, s.Price)
	p.Cash -= paid
	p.Secrets++
	s.Secrets--
	s.Price += s.Price*PriceRisePercent/100 + PriceRiseDollars
	s.Heat = min(BurnHeat, s.Heat+HaggleWinHeat)
	r := t.result(fmt.Sprintf("%s took your $%d and whispered a Secret. You hold %d.", s.Name, paid, p.Secrets))
	r.public(t.Tick, fmt.Sprintf("%s bought a Secret from %s.", p.Label(), s.Name))
	return r
}

func haggleLost(t *Turn, offer int) Result {
	s, p := t.Source, t.Actor
	lost := (offer*HaggleFailPercent + 99) / 100
	p.Cash -= lost
	if LowballShare*offer < s.Price {
		return t.result(fmt.Sprintf("%s laughed at your $%d and kept $%d of it for the insult.", s.Name, offer, lost))
	}
	s.Heat = min(BurnHeat, s.Heat+HaggleFailHeat)
	return t.result(fmt.Sprintf("%s pocketed $%d of your $%d and told you nothing.", s.Name, lost, offer))
}

// burn sends t.Source to ground for BurnTicks after a deal r: the player
// pays BurnFine (all their cash, if less) to cover their tracks, and the
// news names them.
func burn(t *Turn, r *Result) {
	s, p := t.Source, t.Actor
	fine := min(BurnFine, p.Cash)
	p.Cash -= fine
	s.Heat, s.BurnedUntil = 0, t.Tick+BurnTicks
	r.Outcome.Text += fmt.Sprintf(" Then %s went to ground: you burned the source, and covering your tracks cost you $%d.", s.Name, fine)
	r.Notes[0].Text = r.Outcome.Text
	r.public(t.Tick, fmt.Sprintf("%s was burned after a deal with %s and lies low until tick %d.", s.Name, p.Label(), s.BurnedUntil))
}

// checkTarget returns an EINVALID error if the actor aims at themselves or
// at someone of their own faction: teammates share intel, not break-ins.
func checkTarget(t *Turn, doing string) error {
	if t.Target.ID == t.Actor.ID {
		return Errorf(EINVALID, "You cannot %s yourself.", doing)
	}
	if t.Target.Faction == t.Actor.Faction {
		return Errorf(EINVALID, "You cannot %s %s: %s is %s, like you, and your side already shares its files.",
			doing, t.Target.Name, t.Target.Name, t.Target.Faction)
	}
	return nil
}

// spy: agents + d6 against the target's security (and sweep) + d6; ties
// go to the target (see OddsOf).
func spy(t *Turn) (Result, error) {
	if err := checkTarget(t, "spy on"); err != nil {
		return Result{}, err
	}
	if err := needAP(t.Actor, SpyAP, "spying"); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= SpyAP
	p, q := t.Actor, t.Target
	rep := roll(t, OddsOf(Spy, p.Agents, *q, false, t.Tick, t.Players))
	if rep.Success {
		r := t.result(fmt.Sprintf("Your agents went through %s's files: %s. %s", q.Name, files(q, t.Tick), rep.Summary()))
		r.Intel, r.Report = true, rep
		if rep.Sweep {
			r.tell(t.Tick, q.ID, fmt.Sprintf("Your sweep saw %s go through your files.", p.Label()))
		} else {
			r.tell(t.Tick, q.ID, "Someone went through your files.")
		}
		r.public(t.Tick, fmt.Sprintf("Someone went through the files of %s.", q.Label()))
		return r, nil
	}
	r := t.result(fmt.Sprintf("Your agents were spotted in %s's office, and %s knows who sent them. %s", q.Name, q.Name, rep.Summary()))
	r.Report = rep
	r.tell(t.Tick, q.ID, fmt.Sprintf("%s was caught spying on you.", p.Label()))
	r.public(t.Tick, fmt.Sprintf("%s was caught spying on %s.", p.Label(), q.Label()))
	return r, nil
}

// files is what a spy finds in q's files at tick: "$300, 2 agents,
// security 1, 0 Secrets, 12 AP, no trap, no sweep, no bid".
func files(q *Player, tick int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$%d, %d agent%s, security %d, %d Secret%s, %d AP", q.Cash, q.Agents, plural(q.Agents), q.Security,
		q.Secrets, plural(q.Secrets), q.AP)
	if q.Trap {
		b.WriteString(", a trap set")
	} else {
		b.WriteString(", no trap")
	}
	if q.Sweeping(tick) {
		fmt.Fprintf(&b, ", a sweep until tick %d", q.SweepUntil)
	} else {
		b.WriteString(", no sweep")
	}
	if q.Bid > 0 {
		fmt.Fprintf(&b, ", a bid of $%d with the broker", q.Bid)
	} else {
		b.WriteString(", no bid")
	}
	return b.String()
}

// steal: agents + d6 against the target's defence (see OddsOf: higher for
// a thief who has not cased the place, and for one who springs a trap) +
// d6; ties go to the target. Success moves one Secret and puts the
// target's guards on alert: nobody can steal from them for AlertTicks, so
// one raider cannot strip a player bare. Failure costs an agent (a sprung
// trap, TrapCatch more). Either way a thief still protected (new, or on
// alert) loses it: protection shelters newcomers and victims, not raids.
func steal(t *Turn) (Result, error) {
	if err := checkSteal(t); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= StealAP
	p, q := t.Actor, t.Target
	p.LieLowUntil = t.Tick + StealCooldown
	rep := roll(t, OddsOf(Steal, p.Agents, *q, t.Cased, t.Tick, t.Players))
	if rep.Trap {
		q.Trap = false
	}
	var r Result
	if rep.Success {
		r = stole(t, rep)
	} else {
		r = caught(t, rep)
	}
	if p.Protected(t.Tick) {
		p.ProtectedUntil = t.Tick
		r.Outcome.Text += " Your protection from theft is over: others may steal from you now."
	}
	r.Outcome.Text += " " + rep.Summary()
	r.Notes[0].Text = r.Outcome.Text
	r.Report = rep
	return r, nil
}

// stole is a theft that worked.
func stole(t *Turn, rep *Report) Result {
	p, q := t.Actor, t.Target
	p.Secrets++
	q.Secrets--
	r := t.result(fmt.Sprintf("Your agents stole a Secret from %s. You hold %d.", q.Name, p.Secrets))
	if rep.Trap {
		r.Outcome.Text = fmt.Sprintf("Your agents sprang %s's trap and still got away with a Secret, but were seen. You hold %d.",
			q.Name, p.Secrets)
	}
	q.ProtectedUntil = max(q.ProtectedUntil, t.Tick+AlertTicks)
	thief := "Someone"
	if rep.Trap {
		thief = p.Label() + ", seen springing your trap,"
	}
	r.tell(t.Tick, q.ID, fmt.Sprintf("%s stole one of your Secrets. Your guards are on alert: nobody can steal from you until tick %d.",
		thief, q.ProtectedUntil))
	r.public(t.Tick, fmt.Sprintf("Someone stole a Secret from %s.", q.Label()))
	return r
}

// caught is a theft that failed: the thief loses an agent, and TrapCatch
// more to a sprung trap.
func caught(t *Turn, rep *Report) Result {
	p, q := t.Actor, t.Target
	lost := 1
	if rep.Trap {
		lost += TrapCatch
	}
	lost = min(lost, p.Agents)
	p.Agents -= lost
	if !rep.Trap {
		r := t.result(fmt.Sprintf("Your break-in at %s's failed and one of your agents was caught.", q.Name))
		r.tell(t.Tick, q.ID, fmt.Sprintf("Your guards caught an agent of %s breaking in.", p.Label()))
		r.public(t.Tick, fmt.Sprintf("%s was caught trying to steal from %s and lost an agent.", p.Label(), q.Label()))
		return r
	}
	r := t.result(fmt.Sprintf("Your break-in at %s's ran into a trap: %d of your agents were caught.", q.Name, lost))
	r.tell(t.Tick, q.ID, fmt.Sprintf("Your trap caught %d agent%s of %s breaking in.", lost, plural(lost), p.Label()))
	r.public(t.Tick, fmt.Sprintf("%s walked into a trap trying to steal from %s and lost %d agent%s.", p.Label(), q.Label(), lost, plural(lost)))
	return r
}

func checkSteal(t *Turn) error {
	p, q := t.Actor, t.Target
	if err := checkTarget(t, "steal from"); err != nil {
		return err
	}
	if err := needAP(p, StealAP, "stealing"); err != nil {
		return err
	}
	if p.Agents < 1 {
		return Errorf(EINVALID, "Stealing needs at least one agent; recruit first.")
	}
	if t.Tick < p.LieLowUntil {
		return Errorf(EINVALID, "Your agents lie low after your last theft until tick %d.", p.LieLowUntil)
	}
	if q.Protected(t.Tick) {
		return Errorf(EINVALID, "%s is protected from theft until tick %d (new players, and players just robbed, get a breather).",
			q.Name, q.ProtectedUntil)
	}
	if q.Secrets < 1 {
		return Errorf(EINVALID, "%s has no Secrets to steal.", q.Name)
	}
	if !CanStealFrom(p.Secrets, q.Secrets, 0, 0) {
		return Errorf(EINVALID, "%s holds %d Secret%s; you may only steal from players holding more than your %d.",
			q.Name, q.Secrets, plural(q.Secrets), p.Secrets)
	}
	if gap := q.Secrets - p.Secrets; !CanStealFrom(p.Secrets, q.Secrets, p.Cash+p.Bid, t.Cheapest) {
		return Errorf(EINVALID, "Your $%d (your bid counted) would buy the %s %s is ahead of you by at the cheapest source's $%d: "+
			"a thief may rob only while their cash would not buy that gap.", p.Cash+p.Bid, secrets(gap), q.Name, t.Cheapest)
	}
	return nil
}

// CanStealFrom reports whether a thief holding mine Secrets and cash
// dollars (their bid counted) may steal from a player holding theirs, when
// the cheapest Secret on sale costs cheapest dollars (Cheapest; 0: none
// is): only from a player ahead of the thief (theirs > mine), so that a
// theft catches up on a leader and never puts the thief more than one
// Secret ahead, and only while the thief's cash would not buy the gap
// (theirs - mine Secrets at cheapest dollars), as catch-up pay stops
// there: a theft catches up, it does not pay to stay behind. Level
// players may not rob each other: when they could (from players holding
// at least as many), a theft between equals opened a lead of two, and a
// raider that kept a little cash back for its last check-in won 67% head
// to head and 55% at 3 players (game/sim, 300 rounds, seed 1; before
// that, at half as many, 62% head to head). Without the cash rule, once a
// bid's cash counted toward the cash cap, that raider came back: keeping
// $300 back, it trailed on purpose, robbed the leader legally and bought
// the lead at its last check-in, 68% head to head; with it, the best the
// search finds wins 46%.
func CanStealFrom(mine, theirs, cash, cheapest int) bool {
	return theirs >= 1 && theirs > mine && (cheapest <= 0 || cash < cheapest*(theirs-mine))
}

// contest returns the chance that attack + 1d6 beats defence + 1d6 (ties go
// to the defence), the roll spying and stealing make.
func contest(attack, defence int) float64 {
	wins := 0
	for a := 1; a <= 6; a++ {
		for d := 1; d <= 6; d++ {
			if attack+a > defence+d {
				wins++
			}
		}
	}
	return float64(wins) / 36
}

// SpyOdds returns the chance, 0..1, that a player running agents succeeds
// in spying on one with security and no sweep running.
func SpyOdds(agents, security int) float64 { return contest(agents, security) }

// StealOdds returns the chance, 0..1, that a player running agents succeeds
// in stealing from one with security and no trap, having cased the place
// (Cased) or going in blind, in a game of players players (DuoTable:
// the security counts DuoSecurity times). OddsOf has the rest.
func StealOdds(agents, security int, cased bool, players int) float64 {
	return OddsOf(Steal, agents, Player{Security: security}, cased, 0, players).Chance
}

// Cased reports whether a dossier gathered at tick dossier still cases the
// place at tick now: it is at most CaseTicks old.
func Cased(dossier, now int64) bool { return now-dossier <= CaseTicks }
