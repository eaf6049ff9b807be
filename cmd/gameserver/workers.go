package main

// Worker processes: with -workers N other than 1 the program is a
// supervisor (internal/supervisor runs the processes; this file is the
// game's side of it). It takes the database's lock file, opens the
// database once (migrations), and holds every listening socket the workers
// need: the game's (N sockets on -addr with SO_REUSEPORT, so the kernel
// spreads connections across them, or the one socket systemd passed, shared
// by all) and, with -metrics-addr, one metrics socket per worker. It
// re-executes itself once per slot: worker i inherits its game socket as
// supervisor.File(0) and its metrics socket as supervisor.File(1), serves
// with one loop over its own SQLite connection (WAL mode), and says
// "ready" once it accepts.
//
// The sockets belong to the supervisor for as long as it runs. A worker
// that dies leaves its sockets open: connections hashed to it wait in its
// accept queue for the replacement rather than being reset, and on SIGHUP
// (or -reload) the fresh worker of each slot takes over the same sockets
// before the old one is asked to stop, so nothing queued is ever dropped,
// whatever flags the workers run with.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/dblock"
	"github.com/statesecrets/server/internal/supervisor"
)

// workerEnv names the environment variable that makes the program a worker
// of a supervisor: its slot number, from 1.
const workerEnv = "GAMESERVER_WORKER"

// The files a worker inherits, by index of supervisor.File.
const (
	workerGameFile    = 0
	workerMetricsFile = 1 // with -metrics-addr only
)

const (
	// The tick lease: renewed every tickLeaseRenew, lost if not renewed
	// for tickLeaseTTL (a loop stalled that long on a loaded machine). When
	// a holder dies the supervisor releases its lease, so ticks resume on
	// another worker within about tickLeaseRenew; a holder that hangs
	// instead loses it within tickLeaseTTL + tickLeaseRenew.
	tickLeaseTTL   = 10 * time.Second
	tickLeaseRenew = 2 * time.Second

	// maxQuickDeaths is supervisor.Config.MaxQuickDeaths.
	maxQuickDeaths = supervisor.DefaultMaxQuickDeaths
	// stopGrace is how long stopping workers get after SIGTERM (they have
	// shutdownGrace for their connections) before SIGKILL.
	stopGrace = shutdownGrace + 5*time.Second
)

// The response headers that say which worker served a request (only under
// a supervisor): its slot, and its process id, which changes when the slot
// gets a fresh worker (SIGHUP), so a client can tell the new one serves.
const (
	workerHeader    = "X-Worker"
	workerPIDHeader = "X-Worker-Pid"
)

// worker is this process's place under a supervisor; the zero value means
// the program runs alone.
type worker struct {
	slot      int      // from 1; 0: not a worker
	activated *os.File // alone: the listening socket systemd passed, if any
}

// thisWorker reads the worker slot from the environment, and otherwise
// takes the socket systemd may have passed.
func thisWorker() (worker, error) {
	activated, err := systemdListener()
	if err != nil {
		return worker{}, err
	}
	slot, err := supervisor.Slot(workerEnv)
	if err != nil || slot == 0 {
		return worker{activated: activated}, err
	}
	signal.Ignore(syscall.SIGHUP) // the supervisor's signal
	return worker{slot: slot}, nil
}

// sharedListener says whether the game's socket is held by another process
// too, which goes on accepting from it after this one stops (the loop's
// Config.SharedListener): the supervisor's, or systemd's.
func (w worker) sharedListener() bool { return w.slot > 0 || w.activated != nil }

// listen returns the inherited socket for a worker, or systemd's, else a
// new listener on addr.
func (w worker) listen(addr string) (net.Listener, error) {
	f := w.activated
	switch {
	case w.slot > 0:
		f = supervisor.File(workerGameFile, "listener")
	case f == nil:
		return gameserver.Listen("tcp", addr, gameserver.ListenOptions{}) // plain TCP: Shutdown can stop its handshakes
	}
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("inherited listener: %w", err)
	}
	return l, nil
}

// listenMetrics returns the -metrics-addr listener: a worker's is the one
// its supervisor passed; otherwise it listens on addr. An empty addr gives
// nil and no error. Like -addr, it is taken before the database is opened,
// so a port in use refuses the run before it creates anything.
func (w worker) listenMetrics(addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	if w.slot > 0 {
		f := supervisor.File(workerMetricsFile, "metrics listener")
		defer f.Close()
		l, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("-metrics-addr: inherited listener: %w", err)
		}
		return l, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	return l, nil
}

// logger adds the worker's slot to every line.
func (w worker) logger(l *slog.Logger) *slog.Logger {
	if w.slot == 0 {
		return l
	}
	return l.With("worker", w.slot)
}

// handler, for a worker, brings store's read cache up to date with what
// the other workers wrote (game.Store.Sync, one PRAGMA query) before each
// request, and adds the X-Worker and X-Worker-Pid headers to every response.
func (w worker) handler(h http.Handler, store *game.Store, logger *slog.Logger) http.Handler {
	if w.slot == 0 {
		return h
	}
	slot, pid := strconv.Itoa(w.slot), strconv.Itoa(os.Getpid())
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := store.Sync(r.Context()); err != nil {
			logger.Error("store sync", "err", err) // the page may be one write behind
		}
		rw.Header().Set(workerHeader, slot)
		rw.Header().Set(workerPIDHeader, pid)
		h.ServeHTTP(rw, r)
	})
}

// workerMetricsAddr is where worker slot serves metrics: worker i on the
// -metrics-addr port plus i-1, so each has its own (port 0: a free one each).
func workerMetricsAddr(addr string, slot int) string {
	if slot <= 1 || addr == "" {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // net.Listen reports it
	}
	n, err := strconv.Atoi(port)
	if err != nil || n == 0 {
		return addr
	}
	return net.JoinHostPort(host, strconv.Itoa(n+slot-1))
}

// notifyReady tells whoever started this process that it serves: the
// supervisor (its readiness pipe), or systemd (READY=1) when alone.
func (w worker) notifyReady(logger *slog.Logger) {
	var err error
	if w.slot > 0 {
		err = supervisor.Ready()
	} else {
		err = sdNotify("READY=1")
	}
	if err != nil {
		logger.Warn("readiness notification", "err", err)
	}
}

// notifyStopping tells systemd this process, alone, is stopping.
func (w worker) notifyStopping() {
	if w.slot == 0 {
		sdNotify("STOPPING=1")
	}
}

// scheduleTicks runs the game's ticks: alone, on the loop as always; as a
// worker, only while this worker holds the store's tick lease, renewed on
// the loop every tickLeaseRenew, so that one worker at a time schedules
// ticks (Tick is idempotent anyway: a tick due is applied once whoever
// calls). The returned func releases the lease, for after the loop stopped.
func (w worker) scheduleTicks(srv engine, store *game.Store, interval time.Duration, logger *slog.Logger) (release func()) {
	if w.slot == 0 {
		scheduleTicks(srv, store, interval, logger)
		return func() {}
	}
	holder := leaseHolder(os.Getpid(), w.slot)
	// held: we hold the lease; pending: a next is scheduled. Both are
	// touched only by functions the engine runs one at a time.
	var held, pending bool
	var next func()
	next = func() {
		if !held {
			pending = false // the lease was lost since: stop here
			return
		}
		srv.AfterFunc(tickStep(store, interval, logger), next)
	}
	renew := func() {
		// The clock others may have moved (the lease's last holder), for
		// untilNextTick's cached read.
		if err := store.Sync(context.Background()); err != nil {
			logger.Error("store sync", "err", err)
		}
		_, now, err := store.AcquireLease(context.Background(), game.TickLease, holder, tickLeaseTTL)
		if err != nil {
			logger.Error("tick lease", "err", err)
		}
		switch {
		case now && !held:
			logger.Info("tick lease taken", "holder", holder)
			if !pending {
				pending = true
				srv.AfterFunc(0, next)
			}
		case !now && held:
			logger.Warn("tick lease lost", "holder", holder)
		}
		held = now
	}
	srv.AfterFunc(0, renew)
	srv.Every(tickLeaseRenew, renew)
	return func() {
		if err := store.ReleaseLease(context.Background(), game.TickLease, holder); err != nil {
			logger.Warn("tick lease release", "err", err)
		}
	}
}

// leaseHolder names the worker of slot with process id pid as a lease
// holder: unique among the live processes of a host.
func leaseHolder(pid, slot int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/worker-%d", host, pid, slot)
}

// workerCount is what -workers n means: 0 is one per CPU.
func workerCount(n int) int {
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}

// supervise is the program with -workers other than 1 (see the top of this
// file). It returns nil after a graceful stop (ctx ended), or an error when
// it could not start or workers kept dying.
func supervise(ctx context.Context, o options, args []string, w worker, logger *slog.Logger, stderr io.Writer) error {
	n := workerCount(o.workers)
	// The sockets first: a port in use refuses the run before it creates
	// the database or its lock.
	files, addr, err := workerSockets(o, n, w.activated)
	defer func() {
		for _, fs := range files {
			for _, f := range fs {
				f.Close()
			}
		}
	}()
	if err != nil {
		return err
	}
	if err := checkWorkerServing(o, stderr); err != nil {
		return err
	}
	lock, err := lockDatabase(o.db, n)
	if err != nil {
		return err
	}
	defer lock.Close()
	store, err := openStore(o) // migrate once, and fail here rather than in every worker
	if err != nil {
		return err
	}
	defer store.Close()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("-workers: cannot find this program to start workers: %w", err)
	}
	sv := supervisor.New(supervisor.Config{
		Exe: exe, Args: args, Env: workerEnviron(), SlotEnv: workerEnv, Workers: n,
		Files:  func(slot int) []*os.File { return files[slot-1] },
		Stderr: stderr, Logger: logger, SysProcAttr: workerProcAttr(), StopGrace: stopGrace,
		OnExit: func(slot, pid int) {
			if err := store.ReleaseLease(context.Background(), game.TickLease, leaseHolder(pid, slot)); err != nil {
				logger.Warn("tick lease release", "worker", slot, "err", err)
			}
		},
	})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go reloadOnHangup(ctx, hup, sv, lock, logger)

	err = sv.Run(ctx, func() {
		logger.Info("serving", "addr", addr, "db", o.db, "tick", o.tick, "workers", n, "pid", os.Getpid())
		if err := sdNotify("READY=1"); err != nil {
			logger.Warn("readiness notification", "err", err)
		}
	})
	sdNotify("STOPPING=1")
	return err
}

// checkWorkerServing refuses, as a lone server's run does (serving.ready),
// a malformed cookie key and an access log that cannot be opened before
// the supervisor creates the database: its workers would each be refused
// for them, after it. The log is opened and closed again (removed if this
// opened it first); each worker opens it for itself.
func checkWorkerServing(o options, stderr io.Writer) error {
	if _, _, err := keysFromEnv(); err != nil {
		return err
	}
	var sv serving
	defer sv.release()
	return sv.openAccessLog(o.accessLog, stderr)
}

// reloadOnHangup replaces the workers on each SIGHUP until ctx ends,
// telling systemd (RELOADING=1, then READY=1) and the lock file (for
// -reload) how it went; a failure is logged as an error.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, sv *supervisor.Supervisor, lock *dblock.Lock, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		logger.Info("restarting workers (SIGHUP)")
		sdNotify(reloadingState())
		err := sv.Reload(ctx)
		if err != nil {
			logger.Error("restart failed", "err", err)
		}
		if werr := lock.Reloaded(err); werr != nil {
			logger.Error("lock file", "err", werr)
		}
		sdNotify("READY=1")
	}
}

// hangupWarning is what a lone server logs on SIGHUP, which it ignores.
const hangupWarning = "SIGHUP ignored: a lone server (-workers 1) has no graceful restart; " +
	"run it with -workers 2 or more (the systemd unit's -workers 0: one per CPU) to restart on SIGHUP"

// warnOnHangup keeps a lone server (no workers) serving on SIGHUP, whose
// default action would end the process, and logs hangupWarning once per
// signal. The returned stop restores the default action.
func warnOnHangup(logger *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				logger.Warn(hangupWarning)
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// workerSockets opens what each slot's worker inherits: its game socket
// (one SO_REUSEPORT socket per slot on -addr, or systemd's for all) and,
// with -metrics-addr, its metrics socket. It returns them by slot-1, and
// the game's address. Another server on -addr is an error: one that
// listens there without SO_REUSEPORT makes the bind fail, and one with
// (a second supervisor) is found by binding the port without it first.
func workerSockets(o options, n int, activated *os.File) (files [][]*os.File, addr string, err error) {
	files = make([][]*os.File, n)
	if activated != nil {
		l, err := net.FileListener(activated)
		if err != nil {
			return files, "", fmt.Errorf("systemd socket: %w", err)
		}
		addr = l.Addr().String()
		l.Close()
		for i := range files {
			files[i] = []*os.File{activated}
		}
	} else if addr, err = reusePortSockets(o.addr, files); err != nil {
		return files, "", err
	}
	if o.metrics == "" {
		return files, addr, nil
	}
	for i := range files {
		l, err := net.Listen("tcp", workerMetricsAddr(o.metrics, i+1))
		if err != nil {
			return files, "", fmt.Errorf("-metrics-addr (worker %d): %w", i+1, err)
		}
		f, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return files, "", fmt.Errorf("-metrics-addr: %w", err)
		}
		files[i] = append(files[i], f)
	}
	return files, addr, nil
}

// reusePortSockets listens on addr once per slot of files with
// SO_REUSEPORT and returns the address (its port chosen for port 0).
func reusePortSockets(addr string, files [][]*os.File) (string, error) {
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
		probe, err := gameserver.Listen("tcp", addr, gameserver.ListenOptions{})
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return "", fmt.Errorf("-addr %s: another server listens there (a second supervisor?): %w", addr, err)
			}
			return "", fmt.Errorf("-addr: %w", err)
		}
		probe.Close()
	}
	for i := range files {
		l, err := gameserver.Listen("tcp", addr, gameserver.ListenOptions{ReusePort: true})
		if err != nil {
			return "", fmt.Errorf("-addr: %w", err)
		}
		addr = l.Addr().String() // the port chosen for :0, for the others
		f, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return "", fmt.Errorf("-addr: %w", err)
		}
		files[i] = []*os.File{f}
	}
	return addr, nil
}

// workerEnviron is the workers' environment: the supervisor's, less
// systemd's notification socket (the supervisor alone speaks to systemd).
func workerEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, notifySocketEnv+"=") {
			env = append(env, kv)
		}
	}
	return env
}
