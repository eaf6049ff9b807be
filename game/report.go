package game

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Report is what decided one spy or steal order: both sides as they stood
// when it was given, the odds, and the dice. The actor's feed line ends with
// its Summary; the Reports page lists them in full for both sides.
type Report struct {
	ID   int64
	Tick int64
	At   time.Time
	Kind ActionKind // Spy or Steal

	// Actor and Target carry ID, Name, Faction, Agents and Security as they
	// were before the order (a failed theft costs the actor an agent after).
	Actor, Target Player
	// Defence is what the actor's agents and die had to beat besides the
	// target's die: the target's security and what Blind, Trap and Sweep
	// add (see Odds).
	Defence int
	// Blind: a theft without a fresh dossier; Trap: a blind theft sprang
	// the target's trap; Sweep: a spy ran into the target's sweep.
	Blind, Trap, Sweep bool
	Odds               float64 // chance of success, 0..1, before the dice were cast
	AttackRoll         int     // the actor's d6, 1..6
	DefenceRoll        int     // the target's d6, 1..6
	Success            bool    // Attack() > DefenceTotal(); ties go to the target
}

// Attack returns the actor's total: agents plus die.
func (r *Report) Attack() int { return r.Actor.Agents + r.AttackRoll }

// DefenceTotal returns the target's total: defence plus die.
func (r *Report) DefenceTotal() int { return r.Defence + r.DefenceRoll }

// odds returns the Odds the report's roll was made at. How many times the
// security counted (Odds.Times, DuoSecurity in a game of two) is not
// kept: it is the Defence less the additions (Blind, Trap, Sweep), over
// the security.
func (r *Report) odds() Odds {
	o := Odds{Kind: r.Kind, Agents: r.Actor.Agents, Security: r.Target.Security, Times: 1, Blind: r.Blind, Trap: r.Trap,
		Sweep: r.Sweep, Defence: r.Defence, Chance: r.Odds}
	rest := r.Defence
	if r.Blind {
		rest -= BlindDefence
	}
	if r.Trap {
		rest -= TrapDefence
	}
	if r.Sweep {
		rest -= SweepDefence
	}
	if s := r.Target.Security; s > 0 && rest > s && rest%s == 0 {
		o.Times = rest / s
	}
	return o
}

// Why spells out the defence the roll was made against: "security 2 + 3
// going in blind".
func (r *Report) Why() string { return r.odds().Why() }

// Summary is the report in one sentence, as the actor's feed line ends:
// "The roll: 7 (your 4 agents + a 3) against 7 (security 2 + a 5): a tie,
// which goes to the target. The odds were 42%."
func (r *Report) Summary() string {
	verdict := "you won it"
	switch a, d := r.Attack(), r.DefenceTotal(); {
	case a == d:
		verdict = "a tie, which goes to the target"
	case a < d:
		verdict = "the target won it"
	}
	return fmt.Sprintf("The roll: %d (your %d agent%s + a %d) against %d (%s + a %d): %s. The odds were %s.",
		r.Attack(), r.Actor.Agents, plural(r.Actor.Agents), r.AttackRoll, r.DefenceTotal(), r.Why(), r.DefenceRoll,
		verdict, Percent(r.Odds))
}

// roll casts the dice of an order by t.Actor against t.Target at odds o:
// the actor's d6 first, then the target's.
func roll(t *Turn, o Odds) *Report {
	p, q := t.Actor, t.Target
	r := &Report{Tick: t.Tick, At: t.Now, Kind: o.Kind, Defence: o.Defence, Odds: o.Chance,
		Blind: o.Blind, Trap: o.Trap, Sweep: o.Sweep,
		Actor:  Player{ID: p.ID, Name: p.Name, Faction: p.Faction, Agents: p.Agents, Security: p.Security},
		Target: Player{ID: q.ID, Name: q.Name, Faction: q.Faction, Agents: q.Agents, Security: q.Security}}
	r.AttackRoll = d6(t.Rand)
	r.DefenceRoll = d6(t.Rand)
	r.Success = r.Attack() > r.DefenceTotal()
	return r
}

// KeepReports is how many reports the tick keeps per player (as actor or
// target, counted by actor): older ones are deleted.
const KeepReports = 100

// insertReport keeps r, dated at.
func insertReport(ctx context.Context, tx *sql.Tx, r *Report, at time.Time) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO reports (tick, at, kind, actor_id, actor_name, actor_faction,
		actor_agents, actor_security, target_id, target_name, target_faction, target_agents, target_security,
		defence, odds, attack_roll, defence_roll, success, blind, trap, sweep)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Tick, unixNano(at), r.Kind, r.Actor.ID, r.Actor.Name, r.Actor.Faction, r.Actor.Agents, r.Actor.Security,
		r.Target.ID, r.Target.Name, r.Target.Faction, r.Target.Agents, r.Target.Security,
		r.Defence, r.Odds, r.AttackRoll, r.DefenceRoll, r.Success, r.Blind, r.Trap, r.Sweep)
	if err != nil {
		return fmt.Errorf("insert report: %w", err)
	}
	r.ID, err = res.LastInsertId()
	r.At = at
	return err
}

const reportColumns = `id, tick, at, kind, actor_id, actor_name, actor_faction, actor_agents, actor_security,
	target_id, target_name, target_faction, target_agents, target_security, defence, odds, attack_roll,
	defence_roll, success, blind, trap, sweep`

func scanReport(row scanner) (*Report, error) {
	var r Report
	var at int64
	err := row.Scan(&r.ID, &r.Tick, &at, &r.Kind, &r.Actor.ID, &r.Actor.Name, &r.Actor.Faction, &r.Actor.Agents,
		&r.Actor.Security, &r.Target.ID, &r.Target.Name, &r.Target.Faction, &r.Target.Agents, &r.Target.Security,
		&r.Defence, &r.Odds, &r.AttackRoll, &r.DefenceRoll, &r.Success, &r.Blind, &r.Trap, &r.Sweep)
	r.At = fromNano(at)
	return &r, err
}

// Reports returns the latest limit reports of spy and steal orders the
// player gave or was the target of, newest first (nil for limit < 1). A
// report of a successful order against the player names no actor: the
// target never learns who got in unseen (Actor.Name is "", Actor.ID 0),
// unless the actor sprang the target's trap or ran into their sweep.
// From the read cache until a write changes them; do not modify the slice.
func (s *Store) Reports(ctx context.Context, playerID int64, limit int) ([]Report, error) {
	if limit < 1 {
		return nil, nil
	}
	return cached(ctx, s, cacheKey{kind: "reports", id: playerID, n: limit}, []tag{{tagReports, playerID}}, func(ctx context.Context) ([]Report, error) {
		rows, err := s.db.QueryContext(ctx, `SELECT `+reportColumns+` FROM reports
			WHERE actor_id = ?1 OR target_id = ?1 ORDER BY id DESC LIMIT ?2`, playerID, limit)
		rs, err := collect(rows, err, scanReport)
		for i := range rs {
			if r := &rs[i]; r.Actor.ID != playerID && r.Success && !r.Trap && !r.Sweep {
				r.Actor = Player{Faction: r.Actor.Faction}
			}
		}
		return rs, wrap("reports", err)
	})
}
