package sim

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// SearchConfig is a search of the strategy family (Params) for the member
// that wins most against a field of strategies at one table size.
type SearchConfig struct {
	Players int    // the table size
	Seed    uint64 // seeds the starting points and every round's dice
	// Rounds is how many rounds each candidate plays during the search;
	// Confirm how many the best few play again, on other seeds, for the
	// share reported (a share that won the search is flattered by the
	// luck that picked it; the confirmation is not).
	Rounds, Confirm int
	// Starts is how many points of the space the search begins from,
	// drawn at random, besides the middle of the space and the field's
	// own members of the family; Passes bounds the rounds of coordinate ascent
	// from the best of them (each pass tries every other value of every
	// field, one field at a time).
	Starts, Passes int
	RoundTicks     int64      // as Config.RoundTicks
	Field          []Strategy // the strategies the candidate plays against
	Space          Space
	// Workers is how many candidates are played at once; 0 means
	// GOMAXPROCS. The result does not depend on it.
	Workers int
}

// Best is the outcome of a search: the member of the family that won most
// against the field, as its confirmation measured it.
type Best struct {
	Params Params `json:"params"`
	Row           // the confirmation's row: win share of the games played, one seat a game
	// Tried is how many candidates the search played.
	Tried int `json:"tried"`
}

// Search walks the family for the member that wins most against
// cfg.Field at cfg.Players: it plays cfg.Starts random members (and the
// middle of the space), climbs from the best one field at a time while
// that wins more, and confirms the best three on fresh seeds. The field's
// own members of the family (Strategy.Params) are among the starts, so
// the best found is never one the field already plays. Each
// candidate takes one seat of every round; the others are drawn from the
// field as Run draws them. The same cfg gives the same Best.
func Search(cfg SearchConfig) Best {
	s := &searcher{cfg: cfg, seen: map[string]float64{}}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5ea4c4))
	dims := cfg.Space.dims()
	starts := [][]int{middle(dims)}
	for _, f := range cfg.Field {
		if f.Params != nil {
			starts = append(starts, cfg.Space.near(*f.Params))
		}
	}
	for range cfg.Starts {
		x := make([]int, len(dims))
		for i, d := range dims {
			x[i] = rng.IntN(d)
		}
		starts = append(starts, x)
	}
	s.evaluate(starts)
	for range cfg.Passes {
		best := s.top(1)[0]
		var moves [][]int
		for i, d := range dims {
			for v := range d {
				if v != best[i] {
					y := slices.Clone(best)
					y[i] = v
					moves = append(moves, y)
				}
			}
		}
		s.evaluate(moves)
		if slices.Equal(s.top(1)[0], best) {
			break
		}
	}
	return s.confirm(s.top(3))
}

func middle(dims []int) []int {
	x := make([]int, len(dims))
	for i, d := range dims {
		x[i] = d / 2
	}
	return x
}

// searcher keeps the win share of every point played, by key.
type searcher struct {
	cfg    SearchConfig
	seen   map[string]float64
	points [][]int
}

func key(x []int) string {
	b := make([]byte, len(x))
	for i, v := range x {
		b[i] = byte(v)
	}
	return string(b)
}

// evaluate plays every point of xs not played yet, cfg.Rounds rounds
// each on the search's seeds.
func (s *searcher) evaluate(xs [][]int) {
	var todo [][]int
	for _, x := range xs {
		if _, ok := s.seen[key(x)]; !ok {
			s.seen[key(x)] = -1
			todo = append(todo, x)
		}
	}
	rows := parallel(todo, s.cfg.Workers, func(x []int) Row { return s.play(x, s.cfg.Seed, s.cfg.Rounds) })
	for i, x := range todo {
		s.seen[key(x)] = rows[i].WinRate
		s.points = append(s.points, x)
	}
}

// top returns the n points with the best win shares, best first (ties: the
// one played first).
func (s *searcher) top(n int) [][]int {
	pts := slices.Clone(s.points)
	slices.SortStableFunc(pts, func(a, b []int) int { return cmp.Compare(s.seen[key(b)], s.seen[key(a)]) })
	return pts[:min(n, len(pts))]
}

// confirm plays xs again on seeds the search did not use and returns the
// best of them.
func (s *searcher) confirm(xs [][]int) Best {
	rows := parallel(xs, s.cfg.Workers, func(x []int) Row { return s.play(x, s.cfg.Seed+1_000_003, s.cfg.Confirm) })
	best := 0
	for i := range rows {
		if rows[i].WinRate > rows[best].WinRate {
			best = i
		}
	}
	return Best{Params: s.cfg.Space.at(xs[best]), Row: rows[best], Tried: len(s.points)}
}

// play plays the member at x in one seat of rounds rounds seeded by seed
// and returns its row.
func (s *searcher) play(x []int, seed uint64, rounds int) Row {
	return PlayAgainst(s.cfg.Space.at(x).Strategy(), s.cfg.Field, Config{Rounds: rounds, Seed: seed,
		MinPlayers: s.cfg.Players, MaxPlayers: s.cfg.Players, RoundTicks: s.cfg.RoundTicks})
}

// PlayAgainst plays cfg.Rounds rounds (cfg.Strategies is ignored) with
// strategy in one seat of every round and the others drawn from field as
// Run draws them, and returns strategy's row.
func PlayAgainst(strategy Strategy, field []Strategy, cfg Config) Row {
	k := len(field)
	cfg.Strategies = append(slices.Clone(field), strategy)
	tab := run(cfg, func(rng *rand.Rand, n int) []int {
		plays := seats(rng, n-1, k)
		at := rng.IntN(n)
		return slices.Insert(plays, at, k)
	})
	return tab.Rows[k]
}

// parallel returns f of each of xs, computed by up to workers goroutines
// (0: GOMAXPROCS), in the order of xs.
func parallel[X, Y any](xs []X, workers int, f func(X) Y) []Y {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Y, len(xs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(xs)) {
		wg.Go(func() {
			for i := range next {
				out[i] = f(xs[i])
			}
		})
	}
	for i := range xs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
