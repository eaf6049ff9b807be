package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	ghandlers "github.com/gorilla/handlers"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// The -engine values.
const (
	engineLoop    = "loop"    // gameserver's one epoll loop
	engineNetHTTP = "nethttp" // net/http's goroutine per connection, handlers one at a time (gameserver.Serial)
)

// engine is the HTTP server under the game's handlers: both run the
// handlers, ticks and the live-page poll one at a time, so the game needs
// no locks in either.
type engine interface {
	// Serve serves l until Shutdown; it returns gameserver.ErrServerClosed
	// after a Shutdown.
	Serve(l net.Listener) error
	// Shutdown stops accepting, ends open event streams, waits for the
	// responses in progress up to ctx, and closes what is left.
	Shutdown(ctx context.Context) error
	// AfterFunc and Every run f one at a time with the handlers; Soon
	// runs it as soon as it can, at the loop's next turn.
	AfterFunc(d time.Duration, f func())
	Every(period time.Duration, f func())
	Soon(f func())
	// TurnElapsed is how long the loop's turn in progress has run (0
	// under net/http, which has no turns).
	TurnElapsed() time.Duration
	// Stats are the loop's figures; under net/http, which has no loop,
	// only its connection, byte, request and response counts (netStats).
	Stats() gameserver.Stats
}

// newEngine returns the -engine server for h. accessLog, if not nil,
// gets a Common Log Format line per response; maxConns is the loop's
// Config.MaxConns and perAddr its MaxConnsPerAddr, 0 for no cap (net/http
// has neither); shared says the listening
// socket is the supervisor's, handed to the next worker on a restart
// (the loop's Config.SharedListener).
func newEngine(name string, h http.Handler, accessLog io.Writer, logger *slog.Logger, maxConns, perAddr int, shared bool) engine {
	if name == engineNetHTTP {
		return newNetHTTPEngine(h, accessLog, logger)
	}
	if perAddr == 0 {
		perAddr = -1 // the engine's 0 is its default
	}
	return loopEngine{gameserver.New(gameserver.Config{Handler: h, Logger: logger, AccessLog: accessLog,
		MaxBodyBytes: handlers.MaxFormBytes, MaxConns: maxConns, MaxConnsPerAddr: perAddr, WorkQueue: workQueue,
		SharedListener: shared})}
}

// minLoopProcs is the fewest Ps (GOMAXPROCS) the loop engine serves
// with: one for the loop and one for the worker pool's password hashes.
// On one CPU (taskset, a one-CPU VM or container) Go's default is 1, and
// the loop then waited for the one P behind each hash in the scheduler's
// 10 ms slices: in a sustained login storm, 11 ms of the loop's turns per
// request against 0.34 ms on a CPU, and turns of 114 ms (issue 26). With
// a P of its own the loop's thread is the kernel's to schedule, which
// wakes it ahead of a thread that has been hashing.
const minLoopProcs = 2

// ensureLoopProcs raises GOMAXPROCS to minLoopProcs for the loop engine,
// unless the environment sets GOMAXPROCS (an operator's choice is kept).
// It must run before handlers.New and gameserver.New, which size the
// hash queue and the worker pool by GOMAXPROCS.
func ensureLoopProcs(engine string) {
	if engine == engineLoop && os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < minLoopProcs {
		runtime.GOMAXPROCS(minLoopProcs)
	}
}

// workQueue is the loop's Config.WorkQueue: the worker pool's tasks are
// password hashes (about 70 ms of CPU each), so 256 waiting are about 18 s
// of work for one worker, inside the 30 s DeferTimeout. A login past them
// is answered 503 with Retry-After at once, not after waiting 30 s for
// nothing.
const workQueue = 256

// loopEngine is the gameserver loop.
type loopEngine struct{ *gameserver.Server }

func (e loopEngine) AfterFunc(d time.Duration, f func()) { e.Server.AfterFunc(d, f) }
func (e loopEngine) Every(p time.Duration, f func())     { e.Server.Every(p, f) }
func (e loopEngine) Soon(f func())                       { e.Server.Post(f) } // fails only once stopped

// netHTTPEngine is net/http's server, a goroutine per connection, with
// the handlers under gameserver.Serial's lock. Its limits are the loop's
// defaults (header size and read timeout, idle timeout); it has no write
// timeout, which would cut event streams. Bodies are bounded by the
// handlers themselves (handlers.MaxFormBytes).
type netHTTPEngine struct {
	hs     *http.Server
	serial *gameserver.SerialHandler
	stats  *netStats
}

func newNetHTTPEngine(h http.Handler, accessLog io.Writer, logger *slog.Logger) *netHTTPEngine {
	serial := gameserver.Serial(h)
	var root http.Handler = serial
	if accessLog != nil {
		root = ghandlers.LoggingHandler(accessLog, serial) // logs outside the lock
	}
	stats := &netStats{}
	hs := &http.Server{
		Handler:           stats.handler(root),
		ReadHeaderTimeout: gameserver.DefaultReadHeaderTimeout,
		IdleTimeout:       gameserver.DefaultIdleTimeout,
		MaxHeaderBytes:    gameserver.DefaultMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(serial.Close) // ends the streams and the timers
	return &netHTTPEngine{hs: hs, serial: serial, stats: stats}
}

func (e *netHTTPEngine) Serve(l net.Listener) error {
	if err := e.hs.Serve(e.stats.listener(l)); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return gameserver.ErrServerClosed
}

// Shutdown shuts the http.Server down (Close runs at its start, see
// newNetHTTPEngine), closes the connections left when ctx ends, and
// returns once no timer or handler holds the lock, so the store can close.
func (e *netHTTPEngine) Shutdown(ctx context.Context) error {
	err := e.hs.Shutdown(ctx)
	if err != nil {
		e.hs.Close()
	}
	e.serial.Close()
	e.serial.Do(func() {}) // a tick in progress ends first
	return err
}

func (e *netHTTPEngine) AfterFunc(d time.Duration, f func()) { e.serial.AfterFunc(d, f) }
func (e *netHTTPEngine) Every(p time.Duration, f func())     { e.serial.Every(p, f) }
func (e *netHTTPEngine) Soon(f func())                       { e.serial.AfterFunc(0, f) }
func (e *netHTTPEngine) TurnElapsed() time.Duration          { return 0 }
func (e *netHTTPEngine) Stats() gameserver.Stats             { return e.stats.snapshot() }
