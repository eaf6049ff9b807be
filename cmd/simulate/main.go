// Command simulate plays whole rounds of State Secrets with scripted players
// (package game/sim) on the real rules and seeded dice, and prints each
// strategy's win rate, how often it finishes in the top half, and its median
// final Secrets, as a Markdown table.
//
//	simulate [-rounds 400] [-seed 1] [-min 4] [-max 20]
//
// The same flags print the same table. The test in game/sim plays a small
// version and checks the balance targets.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/statesecrets/server/game/sim"
)

func main() {
	rounds := flag.Int("rounds", 400, "rounds to play")
	seed := flag.Uint64("seed", 1, "seed of the dice")
	minPlayers := flag.Int("min", 4, "fewest players in a game")
	maxPlayers := flag.Int("max", 20, "most players in a game")
	flag.Parse()
	if *rounds < 1 || *minPlayers < 2 || *maxPlayers < *minPlayers {
		fmt.Fprintln(os.Stderr, "simulate: need -rounds >= 1 and 2 <= -min <= -max")
		os.Exit(2)
	}
	ss := sim.Strategies()
	fmt.Printf("Strategies: %s; %d to %d players a game.\n", sim.Names(ss), *minPlayers, *maxPlayers)
	sim.Run(sim.Config{Rounds: *rounds, Seed: *seed, MinPlayers: *minPlayers, MaxPlayers: *maxPlayers,
		Strategies: ss}).Print(os.Stdout)
}
