package game

import "fmt"

// haggle offers offer dollars for one of t.Source's Secrets. The deal goes
// through with probability offer/price (capped at 1) and costs
// min(offer, price); a refusal costs half the offer (rounded up) and heats the
// source, which burns at BurnHeat.
func haggle(t *Turn, offer int) (Result, error) {
	if err := checkHaggle(t, offer); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= HaggleAP
	if t.Rand.IntN(t.Source.Price) < offer {
		return haggleWon(t, offer), nil
	}
	return haggleLost(t, offer), nil
}

func checkHaggle(t *Turn, offer int) error {
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
	return nil
}

func haggleWon(t *Turn, offer int) Result {
	s, p := t.Source, t.Actor
	paid := min(offer, s.Price)
	p.Cash -= paid
	p.Secrets++
	s.Secrets--
	s.Price += s.Price/5 + 5
	s.Heat = min(BurnHeat-1, s.Heat+HaggleWinHeat)
	r := t.result(fmt.Sprintf("%s took your $%d and whispered a Secret. You hold %d.", s.Name, paid, p.Secrets))
	r.public(t.Tick, fmt.Sprintf("%s bought a Secret from %s.", p.Label(), s.Name))
	return r
}

func haggleLost(t *Turn, offer int) Result {
	s, p := t.Source, t.Actor
	lost := (offer + 1) / 2
	p.Cash -= lost
	s.Heat += HaggleFailHeat
	r := t.result(fmt.Sprintf("%s pocketed $%d of your $%d and told you nothing.", s.Name, lost, offer))
	if s.Heat >= BurnHeat {
		s.Heat, s.BurnedUntil = 0, t.Tick+BurnTicks
		r.public(t.Tick, fmt.Sprintf("%s was burned after a clumsy approach by %s and lies low until tick %d.",
			s.Name, p.Label(), s.BurnedUntil))
	}
	return r
}

// checkTarget returns an EINVALID error if the actor aims at themselves.
func checkTarget(t *Turn, doing string) error {
	if t.Target.ID == t.Actor.ID {
		return Errorf(EINVALID, "You cannot %s yourself.", doing)
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
	if p.Agents+d6(t.Rand) > q.Security+d6(t.Rand) {
		r := t.result(fmt.Sprintf("Your agents went through %s's files: $%d, %d agents, security %d, %d Secrets, %d AP.",
			q.Name, q.Cash, q.Agents, q.Security, q.Secrets, q.AP))
		r.Intel = true
		r.tell(t.Tick, q.ID, "Someone went through your files.")
		r.public(t.Tick, fmt.Sprintf("Someone went through the files of %s.", q.Label()))
		return r, nil
	}
	r := t.result(fmt.Sprintf("Your agents were spotted in %s's office, and %s knows who sent them.", q.Name, q.Name))
	r.tell(t.Tick, q.ID, fmt.Sprintf("%s was caught spying on you.", p.Label()))
	r.public(t.Tick, fmt.Sprintf("%s was caught spying on %s.", p.Label(), q.Label()))
	return r, nil
}

// steal: agents + d6 against twice the target's security + d6; ties go to
// the target. Success moves one Secret; failure costs an agent. Either way a
// thief still under new-player protection loses it: the protection is for
// newcomers finding their feet, not a cover for raids.
func steal(t *Turn) (Result, error) {
	if err := checkSteal(t); err != nil {
		return Result{}, err
	}
	t.Actor.AP -= StealAP
	p, q := t.Actor, t.Target
	var r Result
	if p.Agents+d6(t.Rand) > 2*q.Security+d6(t.Rand) {
		p.Secrets++
		q.Secrets--
		r = t.result(fmt.Sprintf("Your agents stole a Secret from %s. You hold %d.", q.Name, p.Secrets))
		r.tell(t.Tick, q.ID, "Someone stole one of your Secrets.")
		r.public(t.Tick, fmt.Sprintf("Someone stole a Secret from %s.", q.Label()))
	} else {
		p.Agents--
		r = t.result(fmt.Sprintf("Your break-in at %s's failed and one of your agents was caught.", q.Name))
		r.tell(t.Tick, q.ID, fmt.Sprintf("Your guards caught an agent of %s breaking in.", p.Label()))
		r.public(t.Tick, fmt.Sprintf("%s was caught trying to steal from %s and lost an agent.", p.Label(), q.Label()))
	}
	if p.Protected(t.Tick) {
		p.ProtectedUntil = t.Tick
		r.Outcome.Text += " Your new-player protection is over: others may steal from you now."
		r.Notes[0].Text = r.Outcome.Text
	}
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
		return Errorf(EINVALID, "%s is new and protected from theft until tick %d.", q.Name, q.ProtectedUntil)
	}
	if q.Secrets < 1 {
		return Errorf(EINVALID, "%s has no Secrets to steal.", q.Name)
	}
	if 2*q.Secrets < p.Secrets {
		return Errorf(EINVALID, "%s holds %d Secret%s; you may only steal from players holding at least half as many as your %d.",
			q.Name, q.Secrets, plural(q.Secrets), p.Secrets)
	}
	return nil
}
