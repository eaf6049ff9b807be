package sim

import (
	"fmt"
	"slices"
)

// BalanceSizes are the table sizes the balance targets are checked at:
// the smallest game, a few friends, and a full table of twenty.
var BalanceSizes = []int{2, 3, 4, 6, 10, 20}

// The balance targets (issue 17), which Check applies to a SizeTable.
const (
	// MaxWinShare is the most any strategy may win of the games it plays,
	// at 3 players or more.
	MaxWinShare = 0.40
	// MaxHeadToHead is the most any strategy may win of its games at 2
	// players, one against one.
	MaxHeadToHead = 0.60
	// MinCasualTopHalf is how often the once-a-day player must finish in
	// the top half (Row.TopHalf).
	MinCasualTopHalf = 0.30
	// DefenceFloor: the defensive strategy (the turtle) must win at least
	// this share of the average strategy's win share (within 2x of it).
	DefenceFloor = 0.5
)

// SizeTable is the table of rounds played at one size.
type SizeTable struct {
	Players int `json:"players"`
	Table
	Misses []Miss `json:"misses"` // the balance targets it misses (Check); empty when it meets them all
}

// Miss is one balance target a table misses.
type Miss struct {
	Players  int     `json:"players"`
	Strategy string  `json:"strategy"`
	Target   string  `json:"target"` // "win share", "head to head", "defence", "casual top half"
	Got      float64 `json:"got"`    // the strategy's share, 0..1
	Limit    float64 `json:"limit"`  // the most (win share, head to head) or least (defence, casual) it may be
	Text     string  `json:"text"`   // the miss in a sentence
}

// String returns the miss in a sentence.
func (m Miss) String() string { return m.Text }

// RunSizes plays cfg.Rounds rounds at each of sizes (cfg.MinPlayers and
// MaxPlayers are ignored) and checks each table's balance targets.
func RunSizes(cfg Config, sizes []int) []SizeTable {
	out := make([]SizeTable, 0, len(sizes))
	for _, n := range sizes {
		c := cfg
		c.MinPlayers, c.MaxPlayers = n, n
		st := SizeTable{Players: n, Table: Run(c)}
		st.Misses = st.Check()
		out = append(out, st)
	}
	return out
}

// Check returns each balance target the table misses; nil when it meets
// them all: no strategy wins more than MaxWinShare of its games
// (MaxHeadToHead at 2 players), the turtle wins at least DefenceFloor of
// the average win share, and the casual player finishes in the top half
// at least MinCasualTopHalf of the time.
func (t SizeTable) Check() []Miss {
	var misses []Miss
	target, limit := "win share", MaxWinShare
	if t.Players == 2 {
		target, limit = "head to head", MaxHeadToHead
	}
	mean, n := 0.0, 0
	for _, r := range t.Rows {
		if r.Games == 0 {
			continue
		}
		mean += r.WinRate
		n++
		if r.WinRate > limit {
			misses = append(misses, Miss{t.Players, r.Strategy, target, r.WinRate, limit,
				fmt.Sprintf("%d players: %s wins %.0f%% of its games, over %.0f%%", t.Players, r.Strategy, 100*r.WinRate, 100*limit)})
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	if r := t.Row("turtle"); r.Games > 0 && r.WinRate < DefenceFloor*mean {
		misses = append(misses, Miss{t.Players, r.Strategy, "defence", r.WinRate, DefenceFloor * mean,
			fmt.Sprintf("%d players: the turtle wins %.0f%%, under half the average %.0f%%", t.Players, 100*r.WinRate, 100*mean)})
	}
	if r := t.Row("casual"); r.Seats > 0 && r.TopHalf < MinCasualTopHalf {
		misses = append(misses, Miss{t.Players, r.Strategy, "casual top half", r.TopHalf, MinCasualTopHalf,
			fmt.Sprintf("%d players: the casual player is in the top half %.0f%% of the time, under %.0f%%",
				t.Players, 100*r.TopHalf, 100*MinCasualTopHalf)})
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
	return append(slices.Clone(ss), Strategy{Name: "blind-raider", Every: everyTwoHours, Next: blindRaider})
}
