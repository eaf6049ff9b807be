// Command simulate plays whole rounds of State Secrets with scripted players
// (package game/sim) on the real rules and seeded dice, at each table size
// of -sizes: the named scripts against each other, and a search of the
// family of strategies (sim.Params) for the member that wins most against
// them. For each size it prints every named script's win share (of the
// games it played), how often it finishes in the top half and its median
// final Secrets, the searched best response beside them, how often steals
// failed and haggles burned their source, and the balance targets the size
// misses: as Markdown tables, or with -json as one JSON document,
// {"sizes": [{"players": 2, "rounds": ..., "rows": [...], "best": {...},
// "steal_fail_share": ..., "burn_share": ..., "misses": [...]}, ...]}.
//
//	simulate [-rounds 300] [-seed 1] [-sizes 2,3,4,6,10,20] [-search 60] [-confirm 300] [-json]
//
// The same flags print the same tables. TestBalance in game/sim plays a
// smaller version and fails on any miss.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/statesecrets/server/game/sim"
)

func main() {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	rounds := fs.Int("rounds", 300, "rounds of the named scripts to play at each size")
	seed := fs.Uint64("seed", 1, "seed of the dice")
	sizesFlag := fs.String("sizes", joinSizes(sim.BalanceSizes), "comma-separated table sizes, 2 to 100 players each")
	search := fs.Int("search", 60, "rounds each candidate of the family search plays at each size (fewer past 6 players); 0: no search")
	confirm := fs.Int("confirm", 300, "rounds the search's best candidates play again, on fresh seeds, for the share reported")
	starts := fs.Int("starts", 8, "random starting points of the search, besides the named scripts' own")
	passes := fs.Int("passes", 3, "passes of coordinate ascent at most")
	asJSON := fs.Bool("json", false, "print the tables as JSON instead of Markdown")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	sizes, err := parseSizes(*sizesFlag)
	switch {
	case err != nil:
	case *rounds < 1:
		err = fmt.Errorf("-rounds must be at least 1, not %d", *rounds)
	case *search < 0 || *search > 0 && *confirm < 1:
		err = fmt.Errorf("-search takes 0 (none) or more rounds, and then -confirm at least 1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(2)
	}
	ss := sim.Strategies()
	tables := sim.RunSizes(sim.Config{Rounds: *rounds, Seed: *seed, Strategies: ss}, sizes,
		sim.SearchOptions{Rounds: *search, Confirm: *confirm, Starts: *starts, Passes: *passes})
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Sizes []sim.SizeTable `json:"sizes"`
		}{tables}); err != nil {
			fmt.Fprintln(os.Stderr, "simulate:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Printf("Strategies: %s; %d rounds at each size.\n", sim.Names(ss), *rounds)
	for _, t := range tables {
		printSize(os.Stdout, t)
	}
}

// printSize writes one size's table, its searched best response and its
// misses as Markdown.
func printSize(w io.Writer, t sim.SizeTable) {
	fmt.Fprintf(w, "\n## %d players\n\n", t.Players)
	t.Print(w)
	if b := t.Best; b != nil {
		fmt.Fprintf(w, "\nSearched best response (%d candidates): %s: wins %.0f%% of %d games, top half %.0f%%, median %d Secrets.\n",
			b.Tried, b.Params.Name(), 100*b.WinRate, b.Games, 100*b.TopHalf, b.MedianSecrets)
	}
	if len(t.Misses) == 0 {
		fmt.Fprintln(w, "\nAll balance targets met.")
	}
	for _, m := range t.Misses {
		fmt.Fprintln(w, "\nMISSED:", m)
	}
}

func joinSizes(sizes []int) string {
	s := make([]string, len(sizes))
	for i, n := range sizes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// parseSizes reads -sizes: whole numbers 2..100, comma-separated.
func parseSizes(v string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 || n > 100 {
			return nil, fmt.Errorf("-sizes takes table sizes of 2 to 100 players, comma-separated; %q is not one", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
