package game_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/statesecrets/server/game"
	"golang.org/x/crypto/bcrypt"
)

func Example() {
	dir, err := os.MkdirTemp("", "statesecrets")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	store, err := game.Open(filepath.Join(dir, "game.db"), game.Options{
		BcryptCost: bcrypt.MinCost,
		Rand:       rand.New(rand.NewPCG(1, 2)),
		Now:        func() time.Time { return now },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	ctx := context.Background()
	alice, err := store.Register(ctx, "alice", "trustno1!", game.FBI)
	if err != nil {
		log.Fatal(err)
	}
	out, err := store.Act(ctx, alice.ID, game.Action{Kind: game.Recruit})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out.Text)
	_, err = store.Act(ctx, alice.ID, game.Action{Kind: game.Haggle, SourceID: 1, Offer: 1000})
	fmt.Println(game.ErrorCode(err), game.ErrorMessage(err))

	now = now.Add(65 * time.Minute) // six ticks of 10 minutes are due, the sixth a payday
	n, err := store.Tick(ctx)
	if err != nil {
		log.Fatal(err)
	}
	p, err := store.Player(ctx, alice.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d ticks: $%d, %d AP\n", n, p.Cash, p.AP)
	// Output:
	// You recruited an agent for $100. You now run 3 agents.
	// invalid You offered $1000 but have only $200.
	// 6 ticks: $217, 12 AP
}
