package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/dblock"
	"github.com/statesecrets/server/internal/version"
)

// shutdownGrace bounds how long a graceful shutdown waits for in-flight
// responses before closing the remaining connections.
const shutdownGrace = 10 * time.Second

// usageError is a bad command line; main exits 2 for it, as flag does, and
// prints it unless the flag package already has (printed).
type usageError struct {
	msg     string
	printed bool
}

func (e usageError) Error() string { return e.msg }

// options are the command-line flags.
type options struct {
	addr       string
	db         string
	tick       time.Duration
	round      int64
	maxPlayers int
	accessLog  string
	newPlayer  string
	faction    string
	trustProxy bool
	backup     string
	metrics    string
	workers    int
	engine     string
	maxConns   int
	perAddr    int // -max-conns-per-addr, its default applied (0: no cap)
	version    bool
	reload     bool
	lessons    lessons // the teaching switches and -seed-players (lessons.go)
}

// defaultMaxPlayers is -max-players when not given: two and a half times
// the twenty friends the game is made for, so a flood of registrations
// stops there instead of filling the ranking (259 in 27 s had no cap).
const defaultMaxPlayers = 50

// fdReserve is how many file descriptors the default -max-conns leaves
// for everything but client connections: the listener, the database and
// its journal, the access log, the runtime's own.
const fdReserve = 64

// defaultMaxConns is -max-conns when not given: the open-file limit less
// fdReserve, so accept never fails for want of a descriptor (the server
// closes a connection over the cap at once instead), or 0 (no cap) if the
// limit cannot be read.
func defaultMaxConns() int {
	n := fdLimit()
	if n <= 0 {
		return 0
	}
	return max(n-fdReserve, 1)
}

// defaultPerAddr is -max-conns-per-addr when not given: a quarter of
// maxConns (the engine's default), so one address that holds connections
// with half a header each leaves three quarters of them to the others;
// no cap without a maxConns cap, or behind a trusted proxy, where every
// connection comes from the proxy's address (the proxy caps its clients:
// nginx's limit_conn).
func defaultPerAddr(maxConns int, trustProxy bool) int {
	if trustProxy || maxConns <= 0 {
		return 0
	}
	return max(maxConns/4, 1)
}

// defaultAddr is -addr's default: loopback, as make run serves, so that a
// first try is not open to the network; -addr :8080 is every interface.
const defaultAddr = "127.0.0.1:8080"

// minTick is the shortest -tick. A tick takes about a millisecond in a
// small world and longer in a large one: one shorter than its own work
// falls behind for ever, and the catch-up at start (up to a round of ticks)
// would hold the process before it serves, deaf to SIGTERM.
const minTick = 100 * time.Millisecond

// maxRound is the longest round -round may set, as a time: the round's end
// (ticks times -tick) must stay a time the pages can show; 2^63-1 ticks
// overflowed into a round ending "in -600 s".
const maxRound = 100 * 365 * 24 * time.Hour

// parseFlags parses the command line args into options, writing the
// flag package's usage and errors to stderr: flag.ErrHelp for -h, a
// usageError naming the flag otherwise.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gameserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.declare(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{msg: err.Error(), printed: true}
	}
	if fs.NArg() > 0 {
		return o, usageError{msg: fmt.Sprintf("unexpected argument %q (all settings are flags; see -h)", fs.Arg(0))}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := o.checkNumbers(); err != nil {
		return o, err
	}
	if !set["max-conns-per-addr"] {
		o.perAddr = defaultPerAddr(o.maxConns, o.trustProxy)
	}
	if err := o.checkUses(set["backup"], set["faction"]); err != nil {
		return o, err
	}
	if err := o.lessons.check(&o); err != nil {
		return o, err
	}
	if o.newPlayer != "" { // before the database is created for it
		if err := game.ValidateName(o.newPlayer); err != nil {
			return o, gameUsageError("-new-player", err)
		}
	}
	return o, nil
}

// declare defines the program's flags on fs, to be parsed into o.
func (o *options) declare(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "addr", defaultAddr, "TCP `address` to serve on, host:port (port 0 picks a free one);\nthe default is loopback only: -addr :8080 serves on every interface")
	fs.StringVar(&o.db, "db", "./data/statesecrets.db", "SQLite database `file`, created with its folder on first start")
	fs.DurationVar(&o.tick, "tick", 10*time.Minute, "game tick `interval` (a Go duration: 10m, 30s); at least 100ms")
	fs.Int64Var(&o.round, "round", 0, "ticks per round (0: a week's worth at the -tick interval, 1,008 at 10m)")
	fs.IntVar(&o.maxPlayers, "max-players", defaultMaxPlayers, "refuse registration (409) once the game has this many players, 0 for no limit\n(the game is made for 2 to 20; the default leaves room for guests and new faces)")
	fs.StringVar(&o.accessLog, "access-log", "", "write an access log in Common Log Format to this `file` (\"-\" for stderr; empty: none)")
	fs.StringVar(&o.newPlayer, "new-player", "", "create a player `name`d so with a random password, print its session id (tid) and exit\n(refused while a server runs on the -db: it writes the game)")
	fs.StringVar(&o.faction, "faction", "FBI", "faction of the -new-player: FBI or MIB")
	fs.StringVar(&o.backup, "backup", "", "write a consistent copy of the -db database, live or not, to this new `file` and exit\n(an existing file is never overwritten)")
	fs.StringVar(&o.metrics, "metrics-addr", "", "serve Prometheus metrics at http://`address`/metrics, host:port (empty: off);\nkeep it off the public network, e.g. 127.0.0.1:9190 (with -engine nethttp the loop's own figures,\nsuch as busy time and lag, are absent; connections, bytes, requests and responses are counted)")
	fs.StringVar(&o.engine, "engine", engineLoop, "HTTP `server` under the handlers: loop (one epoll loop) or nethttp (net/http, a goroutine\nper connection, handlers one at a time under one lock; GOMAXPROCS as the environment sets it)")
	fs.IntVar(&o.workers, "workers", 1, "serve from this many worker `processes` on one port, each one loop (0: one per CPU);\n1 serves from this process; otherwise this one supervises them, and SIGHUP restarts them gracefully")
	fs.BoolVar(&o.trustProxy, "trust-proxy", false, "behind a reverse proxy: take the client's address from the last X-Forwarded-For address\n(login rate limit, access log) and TLS from X-Forwarded-Proto: https (Secure cookies);\nset only when a proxy that sets them is the sole way in")
	fs.IntVar(&o.maxConns, "max-conns", defaultMaxConns(), "most client connections open at once, 0 for no cap; one over it closes the connection idle\nthe longest (if 1 s or more), or else is closed at once (the default is the open-file limit\nless 64; the loop's cap: -engine nethttp has none)")
	fs.IntVar(&o.perAddr, "max-conns-per-addr", 0, "most client connections open at once from one address (IPv4, IPv6 /64), 0 for no cap;\none over it is closed at once (the default is a quarter of -max-conns, or no cap with -trust-proxy,\nwhere every connection comes from the proxy; each worker counts its own; -engine nethttp has none)")
	fs.BoolVar(&o.reload, "reload", false, "restart the workers of the server running on -db gracefully (SIGHUP to it), wait until\nevery one is replaced, and exit non-zero if one could not be (the systemd unit's ExecReload)")
	fs.BoolVar(&o.version, "version", false, "print this build's version, VCS revision and Go version, and exit")
	o.lessons.declare(fs)
}

// checkNumbers refuses a number flag out of its range: -tick, -round,
// -max-players, -max-conns, -max-conns-per-addr and -workers.
func (o *options) checkNumbers() error {
	switch {
	case o.tick < minTick:
		return usageError{msg: fmt.Sprintf("-tick must be at least %v, got %v", minTick, o.tick)}
	case o.round < 0:
		return usageError{msg: fmt.Sprintf("-round must be 0 (a week) or a positive number of ticks, got %d", o.round)}
	case o.round > int64(maxRound/o.tick):
		return usageError{msg: fmt.Sprintf("-round must last at most 100 years of -tick %v: at most %d ticks, got %d",
			o.tick, int64(maxRound/o.tick), o.round)}
	case o.maxPlayers < 0:
		return usageError{msg: fmt.Sprintf("-max-players must be 0 (no limit) or positive, got %d", o.maxPlayers)}
	case o.maxConns < 0:
		return usageError{msg: fmt.Sprintf("-max-conns must not be negative, got %d", o.maxConns)}
	case o.perAddr < 0:
		return usageError{msg: fmt.Sprintf("-max-conns-per-addr must not be negative, got %d", o.perAddr)}
	case o.workers < 0:
		return usageError{msg: fmt.Sprintf("-workers must be 0 (one per CPU) or more, got %d", o.workers)}
	}
	return nil
}

// checkUses refuses a file name that is not a plain one (-db, and
// -backup when given: backupSet), an unknown -engine and flags that do
// not go together (-faction without -new-player, when given:
// factionSet).
func (o *options) checkUses(backupSet, factionSet bool) error {
	if err := checkDBFile("-db", o.db); err != nil {
		return err
	}
	if backupSet {
		if err := checkDBFile("-backup", o.backup); err != nil {
			return err
		}
	}
	if err := o.checkServe(); err != nil {
		return err
	}
	switch {
	case o.engine != engineLoop && o.engine != engineNetHTTP:
		return usageError{msg: fmt.Sprintf("-engine must be %s or %s, got %q", engineLoop, engineNetHTTP, o.engine)}
	case factionSet && o.newPlayer == "":
		return usageError{msg: "-faction applies only with -new-player"}
	case o.backup != "" && o.newPlayer != "":
		return usageError{msg: "-backup and -new-player do not go together"}
	case o.reload && (o.backup != "" || o.newPlayer != ""):
		return usageError{msg: "-reload goes with neither -backup nor -new-player"}
	}
	return nil
}

// checkServe refuses, before anything is created, a -faction the game
// does not know (with -new-player) and an -addr or -metrics-addr that is
// not host:port.
func (o *options) checkServe() error {
	if o.newPlayer != "" {
		if _, err := game.ParseFaction(o.faction); err != nil {
			return gameUsageError("-faction", err)
		}
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usageError{msg: fmt.Sprintf("-addr must be host:port (e.g. 127.0.0.1:8080, :8080), got %q", o.addr)}
	}
	if _, _, err := net.SplitHostPort(o.metrics); o.metrics != "" && err != nil {
		return usageError{msg: fmt.Sprintf("-metrics-addr must be host:port (e.g. 127.0.0.1:9190), got %q", o.metrics)}
	}
	return nil
}

// gameUsageError is the game's refusal err of flag's value, as a usage
// error naming the flag.
func gameUsageError(flag string, err error) usageError {
	msg := game.ErrorMessage(err)
	return usageError{msg: flag + ": " + strings.ToLower(msg[:1]) + msg[1:]}
}

// checkDBFile refuses a -db or -backup value that is not a plain file
// name: empty (-backup "" would otherwise start a server), SQLite's
// ":memory:" (a database that vanishes with the process, or a backup of 0
// bytes), URI forms ("file:..."), which SQLite would read as settings
// rather than a name, and the names of the files SQLite keeps beside
// another database (game.Companion: x.db-journal, -wal, -shm), which it
// deletes when that one is opened: a backup "backed up" there was lost.
func checkDBFile(flagName, name string) error {
	switch {
	case name == "":
		return usageError{msg: flagName + " must name a file, got an empty name"}
	case name == ":memory:":
		return usageError{msg: flagName + " must name a file: :memory: is a database in memory, gone with the process"}
	case len(name) >= 5 && strings.EqualFold(name[:5], "file:"):
		return usageError{msg: fmt.Sprintf("%s must be a plain file name, not a URI (%q): drop the file: and any ?settings", flagName, name)}
	}
	if db, suffix, ok := game.Companion(name); ok {
		return usageError{msg: fmt.Sprintf("%s %s: SQLite takes a name ending %s for a file of the database %s, "+
			"and deletes or overwrites it when that database is opened; choose another name", flagName, name, suffix, db)}
	}
	return nil
}

// run is the whole program: it returns when ctx ends (after a graceful
// shutdown) or on the first error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.version {
		_, err := fmt.Fprintln(stdout, "gameserver", version.Get())
		return err
	}
	if o.backup != "" {
		return backup(ctx, o, stdout)
	}
	if o.reload {
		return reloadServer(ctx, o, stdout)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	w, err := thisWorker()
	if err != nil {
		return err
	}
	if o.newPlayer == "" && o.lessons.seedPlayers == 0 && o.workers != 1 && w.slot == 0 {
		return supervise(ctx, o, args, w, logger, stderr)
	}
	logger = w.logger(logger)
	var sv serving
	if o.newPlayer == "" && o.lessons.seedPlayers == 0 {
		// Ready first: a port in use, a log it cannot write or a bad key
		// refuses the run before it creates the database or its lock.
		if err := sv.ready(o, w, stderr); err != nil {
			sv.release()
			return err
		}
		defer sv.release()
	}
	if w.slot == 0 { // a worker's supervisor holds the lock
		lock, err := o.lock()
		if err != nil {
			return err
		}
		defer lock.Close()
	}
	store, err := openStore(o) // after the lock: opening migrates and catches up ticks
	if err != nil {
		return err
	}
	defer store.Close()
	if o.newPlayer != "" {
		return newPlayer(ctx, store, o, stdout, stderr)
	}
	if o.lessons.seedPlayers > 0 {
		return o.lessons.seed(ctx, store, stdout)
	}
	return serve(ctx, store, o, w, &sv, logger)
}

// serving is what run readies before it opens the database, so that a
// run refused for any of it (a port in use, an access log it cannot open,
// a malformed key) has created nothing: the game's listener, the metrics'
// (nil without -metrics-addr), the access log (nil without -access-log)
// and the cookie keys. serve takes the listeners and the log (setting
// them to nil); release closes what serve did not take, and removes an
// access log file this run created.
type serving struct {
	l, ml             net.Listener
	log               io.Writer
	logFile           *os.File
	logCreated        bool
	hashKey, blockKey []byte
}

// ready fills sv for o; on error, sv holds what it took so far.
func (sv *serving) ready(o options, w worker, stderr io.Writer) error {
	var err error
	if sv.l, err = w.listen(o.addr); err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	if sv.ml, err = w.listenMetrics(o.metrics); err != nil {
		return err
	}
	if err := sv.openAccessLog(o.accessLog, stderr); err != nil {
		return err
	}
	sv.hashKey, sv.blockKey, err = keysFromEnv()
	return err
}

// release closes what serve did not take.
func (sv *serving) release() {
	if sv.l != nil {
		sv.l.Close()
	}
	if sv.ml != nil {
		sv.ml.Close()
	}
	if sv.logFile != nil {
		sv.logFile.Close()
		if sv.logCreated {
			os.Remove(sv.logFile.Name())
		}
	}
}

// lock takes the -db database's lock for what o asks of this one process
// (serve, -new-player or -seed-players), each of which writes the game, so
// that beside a running server it is refused, naming the flag and the
// server's pid, before the store is opened.
func (o options) lock() (*dblock.Lock, error) {
	switch {
	case o.newPlayer != "":
		return takeLock("-new-player", o.db, 1, "enlist through the game's Enlist page instead, or stop the server first")
	case o.lessons.seedPlayers > 0:
		return takeLock("-seed-players", o.db, 1, "seed before the server starts on it, or stop the server first")
	}
	return lockDatabase(o.db, 1)
}

func openStore(o options) (*game.Store, error) {
	if err := os.MkdirAll(filepath.Dir(o.db), 0o755); err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	store, err := game.Open(o.db, game.Options{TickInterval: o.tick, RoundTicks: o.round, MaxPlayers: o.maxPlayers,
		NoReadCache: o.lessons.noReadCache})
	if err != nil {
		return nil, fmt.Errorf("-db %s: %w", o.db, err)
	}
	return store, nil
}

// backup copies the -db database to the -backup file; a server may be
// serving it meanwhile (game.Backup).
func backup(ctx context.Context, o options, stdout io.Writer) error {
	if err := game.Backup(ctx, o.db, o.backup); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("-backup %s: the file exists; a backup never overwrites one", o.backup)
		}
		return fmt.Errorf("-backup: %w", err)
	}
	info, err := os.Stat(o.backup)
	if err != nil {
		return fmt.Errorf("-backup: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "backed up %s to %s (%d bytes)\n", o.db, o.backup, info.Size())
	return err
}

// newPlayer registers a player with a random password and prints the id of
// a new session for it: the tid of /game?function=hq&tid=... URLs.
func newPlayer(ctx context.Context, store *game.Store, o options, stdout, stderr io.Writer) error {
	faction, err := game.ParseFaction(o.faction) // checked by checkServe
	if err != nil {
		return err
	}
	password := rand.Text()
	p, err := store.Register(ctx, o.newPlayer, password, faction)
	if err != nil {
		return fmt.Errorf("-new-player: %s", game.ErrorMessage(err))
	}
	sess, err := store.CreateSession(ctx, p.ID)
	if err != nil {
		return err
	}
	// The tid alone on stdout, for scripts; the password for a person, who
	// may rather log in through the form.
	fmt.Fprintf(stderr, "gameserver: created %s (%s); password %s\n", p.Name, p.Faction, password)
	_, err = fmt.Fprintln(stdout, sess.ID)
	return err
}

// serve serves the game on sv's listener and, when it has one, the metrics
// on its metrics listener, writing its access log; it takes them (see
// serving) once the server is built; until then the caller releases them.
func serve(ctx context.Context, store *game.Store, o options, w worker, sv *serving, logger *slog.Logger) error {
	ensureLoopProcs(o.engine)
	h, err := handlers.New(store, handlers.Options{Logger: logger, HashKey: sv.hashKey, BlockKey: sv.blockKey, TrustProxy: o.trustProxy,
		SharedAuthLimit: w.slot > 0, HashOnLoop: o.lessons.hashOnLoop})
	if err != nil {
		return err
	}
	l, ml, accessLog, logFile := sv.l, sv.ml, sv.log, sv.logFile
	sv.l, sv.ml, sv.log, sv.logFile = nil, nil, nil, nil
	if logFile != nil {
		defer logFile.Close()
	}
	srv := newEngine(o.engine, w.handler(realIP(o.trustProxy, h), store, logger), accessLog, logger, o.maxConns, o.perAddr, w.sharedListener())
	if ml != nil {
		defer serveMetricsOn(ml, handlers.Metrics(store, srv.Stats, h.RequestMetrics()), defaultMetricsLimits, logger)()
	}
	defer w.scheduleTicks(srv, store, o.tick, logger)() // after the loop stopped: release the tick lease
	srv.Every(handlers.LivePollInterval, func() { h.PollLive(context.Background()) })
	h.SetLiveSoon(srv.Soon)
	h.SetLiveTurn(srv.TurnElapsed)
	o.lessons.warn(logger)
	if w.slot == 0 { // a worker ignores SIGHUP, its supervisor's signal
		defer warnOnHangup(logger)()
	}
	logger.Info("serving", "addr", l.Addr().String(), "db", o.db, "tick", o.tick, "engine", o.engine, "gomaxprocs", runtime.GOMAXPROCS(0))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	w.notifyReady(logger)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	w.notifyStopping()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown", "err", err)
	}
	if err := <-done; !errors.Is(err, gameserver.ErrServerClosed) {
		return err
	}
	return nil
}

// metricsLimits are the metrics listener's own limits, apart from the
// game's, so that a scraper that stalls, idles or opens connections by the
// thousand holds at most maxConns descriptors, each for a bounded time, and
// never the game's (1,950 scrapes a second once held 19,996 of 20,000).
type metricsLimits struct {
	read  time.Duration // the whole request, headers included
	write time.Duration // the whole response
	idle  time.Duration // a kept-alive connection between requests
	// maxConns caps the connections open at once; one accepted over it
	// takes the slot of the one waiting longest without a request (new or
	// idle), which is closed, and waits only while every one serves a
	// request (slotListener).
	maxConns int
	// accepts is how many new connections a second the listener takes,
	// and scrapes how many it answers, maxConns at once (0: no limit);
	// the rest wait, in the kernel's backlog or asleep (pacer).
	accepts, scrapes float64
	// fresh is how long one gather of the metrics answers the scrapes
	// that follow it (sharedScrape; 0: every scrape gathers).
	fresh time.Duration
}

// defaultMetricsLimits: Prometheus scrapes every 15 s to 1 min over one
// kept-alive connection per target; 16 connections leave room for a second
// Prometheus, curl and make loadtest, and 100 new ones a second for all of
// them many times over, and as many scrapes. A gather answers the
// scrapes of the next 100 ms, so clients scraping in a loop cause at most
// ten gathers a second: 50 of them reconnecting to /metrics as fast as
// they could moved the game probe's p50 from 3.6 to 120 ms
// (scripts/scrape-churn.sh).
var defaultMetricsLimits = metricsLimits{read: 10 * time.Second, write: 30 * time.Second, idle: 90 * time.Second, maxConns: 16,
	accepts: 100, scrapes: 100, fresh: 100 * time.Millisecond}

// serveMetricsOn serves h at /metrics on l with net/http, on goroutines of
// its own (never the loop's), within lim, until the returned func is
// called, which stops it and closes l.
func serveMetricsOn(l net.Listener, h http.Handler, lim metricsLimits, logger *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", newSharedScrape(h, lim.fresh, lim.scrapes, float64(lim.maxConns)))
	sl := newSlotListener(l, lim.maxConns, lim.accepts)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: lim.read, ReadTimeout: lim.read, WriteTimeout: lim.write,
		IdleTimeout: lim.idle, ConnState: sl.connState, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go hs.Serve(sl)
	logger.Info("metrics", "addr", l.Addr().String(), "path", "/metrics")
	return func() { hs.Close() }
}

// scheduleTicks runs the game's ticks on the server's loop (or under the
// nethttp engine's lock), each when the game clock says it is due
// (Clock.NextTick), so the time HQ shows is kept. While a step of a tick
// runs no request is served; a payday of many players takes several
// steps (game.Store.TickStep), tickStepGap apart, so that the requests
// that arrive meanwhile wait for one step, not for the whole payday.
func scheduleTicks(srv engine, store *game.Store, interval time.Duration, logger *slog.Logger) {
	var next func()
	next = func() { srv.AfterFunc(tickStep(store, interval, logger), next) }
	srv.AfterFunc(untilNextTick(store, interval), next)
}

// tickStepGap is the pause between two steps of one tick: long enough for
// the loop to serve what arrived during a step, short enough that a
// payday of 10,000 players (100 steps of game.DefaultPaySlice) ends in
// well under a second.
const tickStepGap = 2 * time.Millisecond

// tickStep applies the next step of the ticks due and returns how long
// to wait before the next call.
func tickStep(store *game.Store, interval time.Duration, logger *slog.Logger) time.Duration {
	n, more, err := store.TickStep(context.Background())
	switch {
	case err != nil:
		logger.Error("tick", "err", err)
	case n > 0:
		logger.Debug("tick", "applied", n)
	}
	if more {
		return tickStepGap
	}
	return untilNextTick(store, interval)
}

// untilNextTick is how long until the game clock's next tick is due, at
// least minTickWait (so a timer firing a little early does not spin), or
// one interval if the clock cannot be read.
func untilNextTick(store *game.Store, interval time.Duration) time.Duration {
	const minTickWait = 10 * time.Millisecond
	c, err := store.Clock(context.Background())
	if err != nil {
		return interval
	}
	return max(time.Until(c.NextTick()), minTickWait)
}

// openAccessLog opens the -access-log destination into sv.log, with
// session ids redacted; a file is created if missing (sv.logCreated).
func (sv *serving) openAccessLog(path string, stderr io.Writer) error {
	switch path {
	case "":
		return nil
	case "-":
		sv.log = redactTids{stderr}
		return nil
	}
	_, err := os.Lstat(path)
	created := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("-access-log: %w", err)
	}
	sv.log, sv.logFile, sv.logCreated = redactTids{f}, f, created
	return nil
}

// sessionID matches what could be a session id (32 hex digits, a bearer
// credential for 30 days) anywhere in a log line: however the client spelled
// the parameter (tid, TID, t%69d), the value has this shape, and nothing
// else the game logs does.
var sessionID = regexp.MustCompile(`[0-9A-Fa-f]{32,}`)

// redactTids writes access log lines with every session id replaced by
// "REDACTED". The server writes whole lines, so an id never spans two
// writes.
type redactTids struct{ w io.Writer }

func (r redactTids) Write(p []byte) (int, error) {
	if _, err := r.w.Write(sessionID.ReplaceAll(p, []byte("REDACTED"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// keysFromEnv reads the session cookie keys from STATESECRETS_HASH_KEY (32 or
// 64 bytes) and STATESECRETS_BLOCK_KEY (16, 24 or 32 bytes, AES), each hex or
// standard base64. Unset keys are nil: the handlers then use keys generated on
// first start and kept in the database.
func keysFromEnv() (hashKey, blockKey []byte, err error) {
	if hashKey, err = envKey("STATESECRETS_HASH_KEY", 32, 64); err != nil {
		return nil, nil, err
	}
	if blockKey, err = envKey("STATESECRETS_BLOCK_KEY", 16, 24, 32); err != nil {
		return nil, nil, err
	}
	return hashKey, blockKey, nil
}

func envKey(name string, sizes ...int) ([]byte, error) {
	v := os.Getenv(name)
	if v == "" {
		return nil, nil
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		if key, err = base64.StdEncoding.DecodeString(v); err != nil {
			return nil, fmt.Errorf("%s: neither hex nor base64", name)
		}
	}
	for _, n := range sizes {
		if len(key) == n {
			return key, nil
		}
	}
	return nil, fmt.Errorf("%s: %d bytes, want one of %v", name, len(key), sizes)
}
