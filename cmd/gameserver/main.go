// Command gameserver serves State Secrets, a small tick-based multiplayer
// espionage game, from one single-threaded event loop (package gameserver)
// over a SQLite database. With -engine nethttp the same handlers run on
// net/http's server instead, a goroutine per connection, one at a time
// under one lock (gameserver.Serial), for contrast.
//
//	gameserver [-addr 127.0.0.1:8080] [-db ./data/statesecrets.db] [-tick 10m] [-access-log PATH|-] [-engine loop|nethttp] [-workers N] [-trust-proxy]
//	gameserver [-db PATH] -new-player NAME   # create a player, print its session id (tid)
//	gameserver [-db PATH] -backup FILE       # copy the database, live or not, to a new file
//	gameserver [-db PATH] -reload            # restart the workers of the server on PATH; non-zero if one failed
//	gameserver -version                      # print the build (version, VCS revision, Go version)
//
// SIGINT or SIGTERM shut the server down gracefully and close the database.
// A lone server (-workers 1) has no graceful restart: it logs so on SIGHUP
// and serves on.
// One process owns a database: the server holds DB.lock (flock) beside
// it (internal/dblock), and a second one, -new-player and -seed-players
// are refused before they open the database, naming its pid; -backup and
// -reload only read it. Started by systemd, the server takes the
// listening socket systemd passes (socket activation) and tells it when it
// is ready, reloading and stopping (Type=notify; systemd.go).
//
// With -workers N other than 1 (0: one per CPU) the program supervises N
// worker processes (internal/supervisor), each one loop over its own SQLite
// connection, sharing the port through sockets it keeps, the metrics ports
// too (workers.go): it restarts a worker that dies, stops them all
// gracefully on SIGINT or SIGTERM, and on SIGHUP (or -reload) replaces them
// with fresh ones without refusing a connection.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var usage usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintln(os.Stderr, "gameserver:", err)
		}
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "gameserver:", err)
		os.Exit(1)
	}
}
