// Command simulate plays whole rounds of State Secrets with scripted players
// (package game/sim) on the real rules and seeded dice, at each table size
// of -sizes, and prints for each size every strategy's win share (of the
// games it played), how often it finishes in the top half, and its median
// final Secrets, with the balance targets the size misses: as Markdown
// tables, or with -json as one JSON document,
// {"sizes": [{"players": 2, "rounds": ..., "rows": [...], "misses": [...]}, ...]}.
//
//	simulate [-rounds 300] [-seed 1] [-sizes 2,3,4,6,10,20] [-json]
//
// The same flags print the same tables. TestBalance in game/sim plays a
// smaller version and fails on any miss.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/statesecrets/server/game/sim"
)

func main() {
	rounds := flag.Int("rounds", 300, "rounds to play at each size")
	seed := flag.Uint64("seed", 1, "seed of the dice")
	sizesFlag := flag.String("sizes", joinSizes(sim.BalanceSizes), "comma-separated table sizes, 2 to 100 players each")
	asJSON := flag.Bool("json", false, "print the tables as JSON instead of Markdown")
	flag.Parse()
	sizes, err := parseSizes(*sizesFlag)
	if err == nil && *rounds < 1 {
		err = fmt.Errorf("-rounds must be at least 1, not %d", *rounds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(2)
	}
	ss := sim.Strategies()
	tables := sim.RunSizes(sim.Config{Rounds: *rounds, Seed: *seed, Strategies: ss}, sizes)
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
		fmt.Printf("\n## %d players\n\n", t.Players)
		t.Print(os.Stdout)
		if len(t.Misses) == 0 {
			fmt.Println("\nAll balance targets met.")
		}
		for _, m := range t.Misses {
			fmt.Println("\nMISSED:", m)
		}
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
