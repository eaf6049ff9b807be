package game

import (
	"fmt"
	"strconv"
	"strings"
)

// haggle offers offer dollars for one of t.Source's Secrets. The deal goes
// through with probability offer/price (capped at 1) and costs
// min(offer, price) and HaggleAP; a refusal costs HaggleFailPercent of the
// offer (rounded up) and only HaggleFailAP, and, unless the offer was a
// lowball (under 1/LowballShare of the price), heats the source, which
// burns at BurnHeat. seen is the price the player saw (0: not
// checked): if the price has risen since and the offer no longer covers it,
// the haggle is refused, so the odds are never worse than the ones the
// player chose. A price that fell only makes the offer better: it stands.
func haggle(t *Turn, offer, seen int) (Result, error) {
	if err := checkHaggle(t, offer, seen); err != nil {
		return Result{}, err
	}
	if t.Rand.IntN(t.Source.Price) < offer {
		t.Actor.AP -= HaggleAP
		return haggleWon(t, offer), nil
	}
	t.Actor.AP -= HaggleFailAP
	return haggleLost(t, offer), nil
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
	s.Heat = min(BurnHeat-1, s.Heat+HaggleWinHeat)
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
	s.Heat += HaggleFailHeat
	if s.Heat < BurnHeat {
		return t.result(fmt.Sprintf("%s pocketed $%d of your $%d and told you nothing.", s.Name, lost, offer))
	}
	fine := min(BurnFine, p.Cash)
	p.Cash -= fine
	s.Heat, s.BurnedUntil = 0, t.Tick+BurnTicks
	r := t.result(fmt.Sprintf("%s pocketed $%d of your $%d and went to ground: you burned the source, "+
		"and covering your tracks cost you $%d more.", s.Name, lost, offer, fine))
	r.public(t.Tick, fmt.Sprintf("%s was burned after a clumsy approach by %s and lies low until tick %d.",
		s.Name, p.Label(), s.BurnedUntil))
	return r
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

// spy: agents + d6 against the target's security + d6; ties go to the target.
func spy(t *Turn) (Result, error) {
	if err := checkTarget(t, "spy on"); err != nil {
		return Result{}, err
	}
	if err := needAP(t.Actor, SpyAP, "spying"); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= SpyAP
	p, q := t.Actor, t.Target
	rep := roll(t, Spy, q.Security)
	if rep.Success {
		r := t.result(fmt.Sprintf("Your agents went through %s's files: $%d, %d agent%s, security %d, %d Secret%s, %d AP. %s",
			q.Name, q.Cash, q.Agents, plural(q.Agents), q.Security, q.Secrets, plural(q.Secrets), q.AP, rep.Summary()))
		r.Intel, r.Report = true, rep
		r.tell(t.Tick, q.ID, "Someone went through your files.")
		r.public(t.Tick, fmt.Sprintf("Someone went through the files of %s.", q.Label()))
		return r, nil
	}
	r := t.result(fmt.Sprintf("Your agents were spotted in %s's office, and %s knows who sent them. %s", q.Name, q.Name, rep.Summary()))
	r.Report = rep
	r.tell(t.Tick, q.ID, fmt.Sprintf("%s was caught spying on you.", p.Label()))
	r.public(t.Tick, fmt.Sprintf("%s was caught spying on %s.", p.Label(), q.Label()))
	return r, nil
}

// steal: agents + d6 against the target's defence (stealDefence: higher
// for a thief who has not cased the place) + d6; ties go to the target. Success moves one Secret and puts the target's guards on
// alert: nobody can steal from them for AlertTicks, so one raider cannot strip
// a player bare. Failure costs an agent. Either way a thief still protected
// (new, or on alert) loses it: protection shelters newcomers and victims,
// not raids.
func steal(t *Turn) (Result, error) {
	if err := checkSteal(t); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= StealAP
	p, q := t.Actor, t.Target
	var r Result
	rep := roll(t, Steal, stealDefence(q.Security, t.Cased))
	if rep.Success {
		p.Secrets++
		q.Secrets--
		r = t.result(fmt.Sprintf("Your agents stole a Secret from %s. You hold %d.", q.Name, p.Secrets))
		q.ProtectedUntil = max(q.ProtectedUntil, t.Tick+AlertTicks)
		r.tell(t.Tick, q.ID, fmt.Sprintf("Someone stole one of your Secrets. Your guards are on alert: nobody can steal from you until tick %d.",
			q.ProtectedUntil))
		r.public(t.Tick, fmt.Sprintf("Someone stole a Secret from %s.", q.Label()))
	} else {
		p.Agents--
		r = t.result(fmt.Sprintf("Your break-in at %s's failed and one of your agents was caught.", q.Name))
		r.tell(t.Tick, q.ID, fmt.Sprintf("Your guards caught an agent of %s breaking in.", p.Label()))
		r.public(t.Tick, fmt.Sprintf("%s was caught trying to steal from %s and lost an agent.", p.Label(), q.Label()))
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
	if q.Protected(t.Tick) {
		return Errorf(EINVALID, "%s is protected from theft until tick %d (new players, and players just robbed, get a breather).",
			q.Name, q.ProtectedUntil)
	}
	if q.Secrets < 1 {
		return Errorf(EINVALID, "%s has no Secrets to steal.", q.Name)
	}
	if !CanStealFrom(p.Secrets, q.Secrets) {
		return Errorf(EINVALID, "%s holds %d Secret%s; you may only steal from players holding at least %d%% as many as your %d.",
			q.Name, q.Secrets, plural(q.Secrets), StealFloorPercent, p.Secrets)
	}
	return nil
}

// CanStealFrom reports whether a thief holding mine Secrets may steal from a
// player holding theirs: theirs must be at least StealFloorPercent of mine
// (and at least 1), so thieves punch up, not down.
func CanStealFrom(mine, theirs int) bool {
	return theirs >= 1 && 100*theirs >= StealFloorPercent*mine
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
// in spying on one with security.
func SpyOdds(agents, security int) float64 { return contest(agents, security) }

// StealOdds returns the chance, 0..1, that a player running agents succeeds
// in stealing from one with security, having cased the place (Cased) or
// going in blind.
func StealOdds(agents, security int, cased bool) float64 {
	return contest(agents, stealDefence(security, cased))
}

// stealDefence is what a thief's agents and die must beat, besides the
// target's die: the target's security, plus BlindDefence for a thief who
// goes in blind.
func stealDefence(security int, cased bool) int {
	if cased {
		return security
	}
	return security + BlindDefence
}

// Cased reports whether a dossier gathered at tick dossier still cases the
// place at tick now: it is at most CaseTicks old.
func Cased(dossier, now int64) bool { return now-dossier <= CaseTicks }
