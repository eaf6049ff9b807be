package main

// The server's lock file, beside the database (internal/dblock): held by
// the one server of a database for as long as it runs, so a second one,
// and every command that would write the game, refuses before it opens
// the store; read by -reload (reload.go) to find the server and learn how
// its reload went.

import (
	"errors"
	"fmt"

	"github.com/statesecrets/server/internal/dblock"
)

// lockDatabase takes the lock of the -db database for this process,
// serving with workers processes (1: this one), before anything opens the
// store: a process that cannot take it changes nothing (dblock). It
// creates the database's folder if needed, as openStore does.
func lockDatabase(db string, workers int) (*dblock.Lock, error) {
	return takeLock("-db", db, workers, "stop it first, or restart its workers with -reload")
}

// takeLock takes the lock of db for the command of flag (-db: serving),
// or says which server holds it and what to do instead (advice).
func takeLock(flag, db string, workers int, advice string) (*dblock.Lock, error) {
	l, err := dblock.Take(db, workers)
	if held := (*dblock.HeldError)(nil); errors.As(err, &held) {
		if flag != "-db" {
			flag += ": -db"
		}
		return nil, fmt.Errorf("%s %s: %v; nothing was changed: %s", flag, db, err, advice)
	} else if err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	return l, nil
}
