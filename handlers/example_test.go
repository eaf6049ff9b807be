package handlers_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
)

// ExampleNew builds the game's handler over a store, as cmd/gameserver does,
// and asks it for a player's headquarters by tid, the State Secrets way.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store, err := game.Open(filepath.Join(dir, "game.db"), game.Options{BcryptCost: 4})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	h, err := handlers.New(store, handlers.Options{}) // cookie and CSRF keys from the store
	if err != nil {
		panic(err)
	}

	p, _ := store.Register(context.Background(), "mulder", "trust-no-one", game.FBI)
	sess, _ := store.CreateSession(context.Background(), p.ID)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/game?function=hq&tid="+sess.ID, nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Cache-Control"))
	// Output: 200 text/html; charset=utf-8 no-store
}
