package game

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// World is the state a tick changes: the clock, every player and every source.
type World struct {
	Clock   Clock
	Players []Player
	Sources []Source
	// Ended gains the result of every round that ends (Advance,
	// FastForward), for the hall of fame; EndedAt is left for the store.
	Ended []RoundResult
}

// Advance applies one tick: on a payday (every PayTicks ticks) AP and cash
// accrue, with catch-up pay (CatchUp) for whoever trails the leader;
// sources gain Secrets, cool down and return from being burned, protection
// from theft runs out, and the round ends when its RoundTicks are up. It
// returns the news and feed lines.
func (w *World) Advance(rng Dice) []Note { return w.advance(rng, false) }

// advance is Advance; paid says the tick's payday, if it is one, was paid
// already (Payday, by the store's slices), so w.Players need hold only the
// players whose protection runs out.
func (w *World) advance(rng Dice, paid bool) []Note {
	w.Clock.Tick++
	tick := w.Clock.Tick
	var notes []Note
	if tick%PayTicks == 0 && !paid {
		notes = Payday(tick, w.Players, Lead(w.Players), len(w.Players), Cheapest(w.Sources, tick))
	}
	if AuctionDue(w.Clock, tick) {
		grand := tick == GrandAuction(w.Clock)
		var called map[int64]int
		if tick == w.Clock.RoundEnd()-1 {
			called = lastCall(tick, w.Players)
		}
		notes = append(notes, auction(tick, w.Players, grand, AuctionReserve(w.Sources, grand), called)...)
	}
	for i := range w.Players {
		if p := &w.Players[i]; p.ProtectedUntil == tick {
			notes = append(notes, Note{Tick: tick, PlayerID: p.ID, Text: "Your protection from theft has ended: you can be stolen from now."})
		}
	}
	for i := range w.Sources {
		notes = append(notes, w.Sources[i].advance(tick, w.Clock.Day(tick), rng)...)
	}
	if tick >= w.Clock.RoundEnd() {
		notes = append(notes, w.newRound()...)
	}
	return notes
}

// Lead returns the most Secrets any of players holds (the ranking's first),
// 0 for none.
func Lead(players []Player) int {
	lead := 0
	for _, p := range players {
		lead = max(lead, p.Secrets)
	}
	return lead
}

// Cheapest returns the lowest asking price, in dollars, of the sources
// with a Secret to sell at tick (holding one, not burned); 0 when none
// has one.
func Cheapest(sources []Source, tick int64) int {
	low := 0
	for _, s := range sources {
		if s.Secrets > 0 && !s.Burned(tick) && (low == 0 || s.Price < low) {
			low = s.Price
		}
	}
	return low
}

// Payday pays players for the payday at tick: each accrues (AP, income and
// CatchUp for the Secrets they trail lead by, at a table of count players,
// as far as it takes their cash up to the price of those Secrets at
// cheapest dollars each, the Cheapest Secret on sale; 0: none is).
// It returns the feed line of each player an agent walked out on. A payday
// is the same paid at once (Advance: lead, count and cheapest from every
// player and source) or in slices of the players by the store, with lead,
// count and cheapest fixed when the first slice is paid.
func Payday(tick int64, players []Player, lead, count, cheapest int) []Note {
	var notes []Note
	for i := range players {
		p := &players[i]
		behind := lead - p.Secrets
		if p.accrue(CatchUp(behind, count), cheapest*max(0, behind)) {
			notes = append(notes, Note{Tick: tick, PlayerID: p.ID, Text: "Unpaid, one of your agents walked out."})
		}
	}
	return notes
}

// FastForward moves the clock on by ticks without simulating them: the round
// in progress ends with its standings as they are and a new one starts at the
// new tick. Tick uses it when the server was down for longer than a round.
func (w *World) FastForward(ticks int64) []Note {
	w.Clock.Tick += ticks
	note := Note{Tick: w.Clock.Tick, Text: fmt.Sprintf(
		"The wires were cut for %d tick%s; round %d ends early and the game resumes at tick %d.",
		ticks, plural(int(ticks)), w.Clock.Round, w.Clock.Tick)}
	return append([]Note{note}, w.newRound()...)
}

// accrue adds a payday's AP (up to MaxAP) and income, plus bonus dollars
// (CatchUp) as far as they take the cash up to ceiling dollars (0:
// MaxCash), to the cash (never below 0). Pay stops at MaxCash. The cash
// set aside in a bid (Player.Bid) counts toward both ceilings: it is the
// player's until the broker takes it, and a bid held over a payday must
// not carry pay past the cap.
// When the cash does not cover the agents' upkeep, one agent deserts, and
// accrue reports true: without that, a broke player's agents would work for free.
func (p *Player) accrue(bonus, ceiling int) (deserted bool) {
	p.AP = max(p.AP, min(MaxAP, p.AP+APPerPay))
	if ceiling <= 0 {
		ceiling = MaxCash
	}
	cash := p.Cash + p.Income()
	cash = max(cash, min(cash+bonus, ceiling-p.Bid))
	p.Cash = max(0, min(cash, max(p.Cash, MaxCash-p.Bid)))
	if cash < 0 && p.Agents > 0 {
		p.Agents--
		return true
	}
	return false
}

// CatchUp returns a payday's catch-up pay, in dollars, for a player behind
// Secrets behind the ranking's first at a table of players: CatchUpPay
// (DuoCatchUpPay at a table of DuoTable) per Secret behind, shared out
// over the players' rivals for first place (players-1), at most
// CatchUpMax; 0 for the leader (behind <= 0). Head to head the trailing
// player gets it whole; at a big table it is small, since most of the
// table trails and the leader has many rivals already. It is paid only as
// far as it takes the player's cash (their bid counted) up to what buys
// back the Secrets behind at the cheapest source (Payday): it buys
// Secrets back, it is not saved.
func CatchUp(behind, players int) int {
	if behind <= 0 {
		return 0
	}
	pay := CatchUpPay
	if players == DuoTable {
		pay = DuoCatchUpPay
	}
	return min(CatchUpMax, pay*behind/max(1, players-1))
}

// advance ticks one source on day (from 0) of the round: back from being
// burned, cooler, closer to its price of the day (DayPrice), and perhaps
// holding one more Secret.
func (s *Source) advance(tick int64, day int, rng Dice) []Note {
	var notes []Note
	if s.BurnedUntil == tick {
		notes = append(notes, Note{Tick: tick, Text: s.Name + " is talking again."})
	}
	s.Heat = max(0, s.Heat-HeatCooling)
	if d := s.Price - s.DayPrice(day); d != 0 {
		s.Price -= cmp.Compare(d, 0) * max(1, abs(d)/PriceDrift)
	}
	if !s.Burned(tick) && s.Secrets < MaxSourceSecrets && rng.IntN(SourceSecretChance) == 0 {
		s.Secrets++
	}
	return notes
}

// reset puts the source back as it is when a round begins.
func (s *Source) reset() {
	s.Secrets, s.Price, s.Heat, s.BurnedUntil = SourceStartSecrets, s.BasePrice, 0, 0
}

// newRound announces the final ranking of the round that ends now and starts
// the next: every player and source back to the starting values. Accounts,
// new-player protection, posts and events are kept; dossiers go stale, and
// the store deletes them. Besides the news, each player gets an alert on
// their wire with their place (YourPlace), so the figures that fall back to
// the start on an open page come with the reason.
func (w *World) newRound() []Note {
	tick := w.Clock.Tick
	rk := Rank(w.Players)
	res := roundResult(w.Clock.Round, tick, rk)
	w.Ended = append(w.Ended, res)
	champ, won := res.Champion()
	places := make(map[int64]int, len(rk.Players))
	for i, p := range rk.Players {
		places[p.ID] = rk.Places[i]
	}
	for i := range w.Players {
		p := &w.Players[i]
		p.Career.record(places[p.ID], p.Secrets, won && champ.PlayerID == p.ID)
	}
	notes := []Note{{Tick: tick, Text: RoundSummary(w.Clock.Round, rk)}}
	next := fmt.Sprintf("Round %d begins: %%s again with $%d, %d agent%s and security %d.",
		w.Clock.Round+1, StartCash, StartAgents, plural(StartAgents), StartSecurity)
	for i, p := range rk.Players {
		notes = append(notes, Note{Tick: tick, PlayerID: p.ID, Alert: true,
			Text: YourPlace(w.Clock.Round, i, rk) + " " + fmt.Sprintf(next, "you start")})
	}
	for i := range w.Players {
		p := &w.Players[i]
		p.resetStats()
		p.ProtectedUntil = tick + NewPlayerProtection
	}
	for i := range w.Sources {
		w.Sources[i].reset()
	}
	w.Clock.Round++
	w.Clock.RoundStart = tick
	return append(notes, Note{Tick: tick, Text: fmt.Sprintf(next, "everyone starts")})
}

// YourPlace tells the player r.Players[i] of the final ranking r how
// round went for them: "Round 3 is over: you placed 2nd of 9, with 4
// Secrets and $350. The MIB wins it." A place shared with players level on
// Secrets is "joint 2nd". The player alone in first place also hears they
// won the round, if they did (RoundResult.Champion).
func YourPlace(round, i int, r *Ranking) string {
	p, place := r.Players[i], r.Places[i]
	joint := ""
	if i > 0 && r.Places[i-1] == place || i+1 < len(r.Places) && r.Places[i+1] == place {
		joint = "joint "
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d is over: you placed %s%s of %d, with %d Secret%s and $%d.",
		round, joint, Ordinal(place), len(r.Players), p.Secrets, plural(p.Secrets), p.Cash)
	level := func(j int) bool { return j >= 0 && j < len(r.Players) && r.Players[j].Secrets == p.Secrets }
	if res := roundResult(round, 0, r); place == 1 && isChampion(&res) {
		b.WriteString(" You won the round.")
		if level(i + 1) {
			b.WriteString(" Others were level on Secrets; you bought one at the last auction.")
		}
	} else if level(i-1) && r.Places[i-1] < place {
		b.WriteString(" Level on Secrets with a player who bought one at the last auction, you place behind them.")
	}
	switch f, ok := r.Winner(); {
	case !ok:
		b.WriteString(" Neither side wins it.")
	case f == p.Faction:
		fmt.Fprintf(&b, " The %s, your side, wins it.", f)
	default:
		fmt.Fprintf(&b, " The %s wins it.", f)
	}
	return b.String()
}

func isChampion(r *RoundResult) bool { _, ok := r.Champion(); return ok }

// Ordinal writes n (from 1) as an English ordinal: "1st", "2nd", "3rd",
// "4th", "11th", "12th", "21st", "112th".
func Ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return strconv.Itoa(n) + suffix
}

// roundResult is the hall of fame's record of round, ended at tick with the
// final ranking rk.
func roundResult(round int, tick int64, rk *Ranking) RoundResult {
	r := RoundResult{Round: round, EndTick: tick, Factions: make([]FactionTotal, len(rk.Factions))}
	r.Winner, _ = rk.Winner()
	for i, f := range rk.Factions {
		r.Factions[i] = FactionTotal{Faction: f.Faction, Players: f.Players, Secrets: f.Secrets}
	}
	for _, i := range rk.best(RoundTop) {
		p := rk.Players[i]
		r.Top = append(r.Top, Placing{Round: round, Place: rk.Places[i], PlayerID: p.ID, Name: p.Name,
			Faction: p.Faction, Secrets: p.Secrets, Cash: p.Cash})
	}
	return r
}

// best returns the indices in r.Players of the best n players by place;
// of the players level at the last place taken, those who enlisted first
// (by ID), never those first by name. They come by place, then in the
// order they enlisted.
func (r *Ranking) best(n int) []int {
	idx := make([]int, len(r.Players))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(r.Places[a], r.Places[b]), cmp.Compare(r.Players[a].ID, r.Players[b].ID))
	})
	return idx[:min(n, len(idx))]
}

// RoundSummary is the news line for the end of round: the top three and the
// winning faction.
func RoundSummary(round int, r *Ranking) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d is over.", round)
	for _, i := range r.best(3) {
		p := r.Players[i]
		fmt.Fprintf(&b, " %d. %s with %d Secret%s and $%d.", r.Places[i], p.Label(), p.Secrets, plural(p.Secrets), p.Cash)
	}
	if f, ok := r.Winner(); ok {
		fmt.Fprintf(&b, " The %s wins the round.", f)
	} else {
		b.WriteString(" Neither faction wins the round.")
	}
	return b.String()
}

// Rank orders a copy of players by Secrets (descending), then by whether
// they bought a Secret at the round's last auction (Player.LastLot: those
// who did first), then name (case-insensitive), places them
// (SharedPlaces) and sums each faction. Only what everyone sees decides a
// place: the Secrets on the ranking, and the last auction's buyers, whom
// the news names. Cash and agents are private (a dossier's), so they
// break no tie, and a name decides none: players level on both share a
// place, and are listed in name order, which the players_ranking index
// keeps (LastLot is set only at the round's last auction, a tick before
// the ranking is final).
func Rank(players []Player) *Ranking {
	r := &Ranking{Players: slices.Clone(players), Factions: []FactionTotal{{Faction: FBI}, {Faction: MIB}}}
	slices.SortFunc(r.Players, func(a, b Player) int {
		return cmp.Or(cmp.Compare(b.Secrets, a.Secrets), lastLotFirst(a, b),
			cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	r.Places = SharedPlaces(1, r.Players)
	for _, p := range players {
		for i := range r.Factions {
			if f := &r.Factions[i]; f.Faction == p.Faction {
				f.Players++
				f.Secrets += p.Secrets
			}
		}
	}
	return r
}

// Winner returns the faction whose players hold more Secrets per player, so
// a bigger side does not win by numbers alone (a side without players
// scores 0); false when the factions are level (cash is private, so it
// breaks no tie).
func (r *Ranking) Winner() (Faction, bool) {
	if len(r.Factions) != 2 {
		return "", false
	}
	a, b := r.Factions[0], r.Factions[1]
	// a.Secrets/a.Players against b.Secrets/b.Players, without rounding; an
	// empty side has 0 Secrets, so max(1, ...) keeps it at 0.
	na, nb := max(1, a.Players), max(1, b.Players)
	switch cmp.Compare(a.Secrets*nb, b.Secrets*na) {
	case 1:
		return a.Faction, true
	case -1:
		return b.Faction, true
	}
	return "", false
}

// lastLotFirst orders a player who bought a Secret at the round's last
// auction (Player.LastLot) before one who did not; 0 when both did or
// neither did.
func lastLotFirst(a, b Player) int {
	switch {
	case a.LastLot == b.LastLot:
		return 0
	case a.LastLot:
		return -1
	}
	return 1
}

// SharedPlaces returns the place of each of players, who are in Rank's
// order (by Secrets, descending, then the last auction's buyers first),
// the first of them in place first: a player level with the one before
// on Secrets and on LastLot shares that one's place, and the next after
// them is placed as if they were not level (1, 1, 3: standard competition
// ranking). A page of a ranking gives its first row's place (1 + how many
// hold more Secrets; LastLot is not set before the round's last auction).
func SharedPlaces(first int, players []Player) []int {
	places := make([]int, len(players))
	for i, p := range players {
		places[i] = first + i
		if i > 0 && p.Secrets == players[i-1].Secrets && p.LastLot == players[i-1].LastLot {
			places[i] = places[i-1]
		}
	}
	return places
}

func abs(n int) int { return max(n, -n) }
