package sim

import (
	"fmt"
	"slices"
)

// BalanceSizes are the table sizes the balance targets are checked at:
// the smallest game, a few friends, and a full table of twenty.
var BalanceSizes = []int{2, 3, 4, 6, 10, 20}

// The balance targets (issues 17 and 30), which Check applies to a
// SizeTable.
const (
	// MaxWinShare is the most any strategy, named or searched, may win of
	// the games it plays, at 3 players or more.
	MaxWinShare = 0.40
	// MaxHeadToHead is the most any strategy may win of its games at 2
	// players, one against one.
	MaxHeadToHead = 0.60
	// MinWinShare is the least every named script but the casual player
	// must win, at every size: a plan that never wins is a trap the
	// rules should not keep.
	MinWinShare = 0.05
	// MinCasualTopHalf is how often the once-a-day player must finish in
	// the top half (Row.TopHalf).
	MinCasualTopHalf = 0.30
	// MaxDailyLoss is the most Secrets a player who checks in once a day
	// may lose to thieves between two check-ins (Stats.DailyMaxLoss):
	// what one purchase the next day recovers.
	MaxDailyLoss = 1
)

// casualName is the name of the once-a-day player MinWinShare spares.
const casualName = "casual"

// SearchedName stands for the searched best response in a Miss, whatever
// member of the family it is.
const SearchedName = "searched"

// SizeTable is the table of rounds played at one size.
type SizeTable struct {
	Players int `json:"players"`
	Table
	// Best is the searched best response against the named scripts
	// (Search); nil when none was searched.
	Best *Best `json:"best,omitempty"`
	// StealFailShare and BurnShare are Stats' shares: of steals that
	// failed, and of haggles that burned their source.
	StealFailShare float64 `json:"steal_fail_share"`
	BurnShare      float64 `json:"burn_share"`
	Misses         []Miss  `json:"misses"` // the balance targets it misses (Check); empty when it meets them all
}

// Miss is one balance target a table misses.
type Miss struct {
	Players  int     `json:"players"`
	Strategy string  `json:"strategy"`
	Target   string  `json:"target"` // "win share", "head to head", "least win share", "casual top half", "daily loss", "burns", "failed steals"
	Got      float64 `json:"got"`    // the strategy's share, 0..1 (daily loss: Secrets)
	Limit    float64 `json:"limit"`  // the most (win share, head to head, daily loss) or least (the others) it may be
	Text     string  `json:"text"`   // the miss in a sentence
}

// String returns the miss in a sentence.
func (m Miss) String() string { return m.Text }

// SearchOptions are the budget of the search RunSizes makes at each size
// (SearchConfig's fields of the same names); Rounds 0: no search. At
// more than 6 players, Rounds and Confirm shrink in proportion (6/n of
// them, at least 10), since a round costs more and a candidate plays fewer
// of the seats.
type SearchOptions struct {
	Rounds, Confirm, Starts, Passes int
	Workers                         int
}

// scaled returns rounds for a table of n players (see SearchOptions).
func scaled(rounds, n int) int {
	if n <= 6 {
		return rounds
	}
	return max(10, (rounds*6+n-1)/n)
}

// RunSizes plays cfg.Rounds rounds at each of sizes (cfg.MinPlayers and
// MaxPlayers are ignored), searches the family (DefaultSpace) for the best
// response to cfg.Strategies at each when search.Rounds > 0, and checks
// each table's balance targets.
func RunSizes(cfg Config, sizes []int, search SearchOptions) []SizeTable {
	out := make([]SizeTable, 0, len(sizes))
	for _, n := range sizes {
		c := cfg
		c.MinPlayers, c.MaxPlayers = n, n
		st := SizeTable{Players: n, Table: Run(c)}
		if search.Rounds > 0 {
			b := Search(SearchConfig{Players: n, Seed: cfg.Seed, Rounds: scaled(search.Rounds, n), Confirm: scaled(search.Confirm, n),
				Starts: search.Starts, Passes: search.Passes, RoundTicks: cfg.RoundTicks, Field: cfg.Strategies,
				Space: DefaultSpace(), Workers: search.Workers})
			st.Best = &b
		}
		st.StealFailShare, st.BurnShare = st.Stats.StealFailShare(), st.Stats.BurnShare()
		st.Misses = st.Check()
		out = append(out, st)
	}
	return out
}

// Check returns each balance target the table misses; nil when it meets
// them all: no strategy, named or searched, wins more than MaxWinShare of
// its games (MaxHeadToHead at 2 players); every named script but the
// casual player wins at least MinWinShare; the casual player finishes in
// the top half at least MinCasualTopHalf of the time; no once-a-day
// player lost more than MaxDailyLoss Secrets between two check-ins; and
// sources burn and steals fail, now and then.
func (t SizeTable) Check() []Miss {
	var misses []Miss
	miss := func(strategy, target string, got, limit float64, format string, args ...any) {
		misses = append(misses, Miss{t.Players, strategy, target, got, limit,
			fmt.Sprintf("%d players: ", t.Players) + fmt.Sprintf(format, args...)})
	}
	target, limit := "win share", MaxWinShare
	if t.Players == 2 {
		target, limit = "head to head", MaxHeadToHead
	}
	rows := slices.Clone(t.Rows)
	if t.Best != nil {
		best := t.Best.Row
		best.Strategy = SearchedName + " (" + best.Strategy + ")"
		rows = append(rows, best)
	}
	for i, r := range rows {
		if r.Games == 0 {
			continue
		}
		if r.WinRate > limit {
			name := r.Strategy
			if i == len(t.Rows) {
				name = SearchedName // a stable key, whatever the search found
			}
			miss(name, target, r.WinRate, limit, "%s wins %.0f%% of its games, over %.0f%%", r.Strategy, 100*r.WinRate, 100*limit)
		}
		if i < len(t.Rows) && r.Strategy != casualName && r.WinRate < MinWinShare {
			miss(r.Strategy, "least win share", r.WinRate, MinWinShare, "%s wins %.0f%% of its games, under %.0f%%",
				r.Strategy, 100*r.WinRate, 100*MinWinShare)
		}
	}
	if r := t.Row(casualName); r.Seats > 0 && r.TopHalf < MinCasualTopHalf {
		miss(r.Strategy, "casual top half", r.TopHalf, MinCasualTopHalf, "the casual player is in the top half %.0f%% of the time, under %.0f%%",
			100*r.TopHalf, 100*MinCasualTopHalf)
	}
	if l := t.Stats.DailyMaxLoss; l > MaxDailyLoss {
		miss("", "daily loss", float64(l), MaxDailyLoss, "a once-a-day player lost %d Secrets between two check-ins, over %d", l, MaxDailyLoss)
	}
	if t.Stats.Haggles > 0 && t.Stats.Burns == 0 {
		miss("", "burns", 0, 0, "no source burned in %d haggles", t.Stats.Haggles)
	}
	if t.Stats.Steals > 0 && t.Stats.StealWins == t.Stats.Steals {
		miss("", "failed steals", 0, 0, "no steal failed of %d", t.Stats.Steals)
	}
	return misses
}

// Pooled returns the named strategy's wins and games summed over tables.
func Pooled(tables []SizeTable, name string) (wins, games int) {
	for _, t := range tables {
		r := t.Row(name)
		wins += r.Wins
		games += r.Games
	}
	return wins, games
}

// WithBlindRaider returns ss and one more strategy, "blind-raider": the
// raider who never spies, stealing on what it guesses of its targets'
// security. Played at the same tables as the raider, it measures what
// spying earns.
func WithBlindRaider(ss []Strategy) []Strategy {
	blind := raiderParams
	blind.Case = false
	return append(slices.Clone(ss), named("blind-raider", blind))
}
