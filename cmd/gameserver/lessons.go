package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/statesecrets/server/game"
)

// lessons are the flags make loadtest's lessons need from the server: the
// teaching switches, each of which reproduces a mistake so that the load
// test can show it beside its fix (no deployment should set one), and
// -seed-players, which fills a world to a realistic size.
type lessons struct {
	hashOnLoop  bool // handlers.Options.HashOnLoop
	noReadCache bool // game.Options.NoReadCache
	seedPlayers int  // -seed-players N: seed and exit (0: not asked)
}

// declare adds the lessons' flags to fs.
func (l *lessons) declare(fs *flag.FlagSet) {
	fs.BoolVar(&l.hashOnLoop, "hash-on-loop", false, "TEACHING SWITCH, never for a deployment: hash passwords on the loop, as a 2002\nsingle-threaded server did, so every client waits for each login's bcrypt (make loadtest's storm)")
	fs.BoolVar(&l.noReadCache, "no-read-cache", false, "TEACHING SWITCH, never for a deployment: turn the pages' read cache off, so every page\nreads the database afresh on the loop (make loadtest's head-of-line lesson)")
	fs.IntVar(&l.seedPlayers, "seed-players", 0, "add this `many` players to the -db, with feeds, dossiers, news and board posts, and exit\n(for load tests: nobody can log in as them; one bcrypt hash in all, so it takes well under a second)")
}

// switches names the teaching switches set, "" when none is.
func (l *lessons) switches() string {
	var set []string
	if l.hashOnLoop {
		set = append(set, "-hash-on-loop")
	}
	if l.noReadCache {
		set = append(set, "-no-read-cache")
	}
	return strings.Join(set, " ")
}

// check refuses the lessons' flags with the flags they do not go with.
// A teaching switch is for watching one loop: with several workers its
// lesson would be spread over processes the load test does not read.
func (l *lessons) check(o *options) error {
	if sw := l.switches(); sw != "" && o.workers != 1 {
		return usageError{msg: fmt.Sprintf("%s: teaching switches want -workers 1 (one loop to watch), got -workers %d", sw, o.workers)}
	}
	switch {
	case l.seedPlayers < 0:
		return usageError{msg: fmt.Sprintf("-seed-players must be positive, got %d", l.seedPlayers)}
	case l.seedPlayers > 0 && (o.newPlayer != "" || o.backup != ""):
		return usageError{msg: "-seed-players goes with neither -new-player nor -backup"}
	}
	return nil
}

// warn logs, at start, that a teaching switch is set.
func (l *lessons) warn(logger *slog.Logger) {
	if sw := l.switches(); sw != "" {
		logger.Warn("teaching switch set: this server reproduces a mistake on purpose, for make loadtest; never deploy it so",
			"switches", sw)
	}
}

// seed adds -seed-players players to the store and says what it wrote.
func (l *lessons) seed(ctx context.Context, store *game.Store, stdout io.Writer) error {
	start := time.Now()
	st, err := store.Seed(ctx, l.seedPlayers)
	if game.ErrorCode(err) == game.ECONFLICT {
		return fmt.Errorf("-seed-players: %s", game.ErrorMessage(err))
	} else if err != nil {
		return fmt.Errorf("-seed-players: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "seeded %d players, %d feed lines, %d dossiers, %d news lines and %d board posts in %.2f s\n",
		st.Players, st.FeedLines, st.Intel, st.News, st.Posts, time.Since(start).Seconds())
	return err
}
