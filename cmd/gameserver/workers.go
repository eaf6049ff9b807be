package main

// Worker processes: with -workers N other than 1 the program is a
// supervisor. It opens the database once (migrations), makes N listening
// sockets on -addr with SO_REUSEPORT, so the kernel spreads connections
// across them, and re-executes itself once per socket: worker i inherits
// socket i as descriptor 3 and a readiness pipe as descriptor 4, serves
// with one loop over its own SQLite connection (WAL mode), and writes
// "ready" on the pipe once it accepts.
//
// The sockets belong to the supervisor for as long as it runs. A worker
// that dies leaves its socket open: connections hashed to it wait in its
// accept queue for the replacement rather than being reset, and on SIGHUP
// the fresh worker of each slot takes over the same socket before the old
// one is asked to stop, so nothing queued is ever dropped.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// workerEnv names the environment variable that makes the program a worker
// of a supervisor: its slot number, from 1.
const workerEnv = "GAMESERVER_WORKER"

// The descriptors a worker inherits (exec.Cmd.ExtraFiles start at 3).
const (
	workerListenFD = 3
	workerReadyFD  = 4
)

// Supervision settings.
const (
	// readyTimeout bounds how long a worker may take to start serving.
	readyTimeout = 60 * time.Second
	// restartBackoff is the wait before restarting a worker that died,
	// doubled for each death in a row up to maxRestartBackoff.
	restartBackoff    = 100 * time.Millisecond
	maxRestartBackoff = 5 * time.Second
	// A worker that dies within shortLife of starting counts towards
	// maxQuickDeaths in a row; then the supervisor gives up.
	shortLife      = 10 * time.Second
	maxQuickDeaths = 5
	// stopGrace is how long stopping workers get after SIGTERM (they have
	// shutdownGrace for their connections) before SIGKILL.
	stopGrace = shutdownGrace + 5*time.Second

	// The tick lease: renewed every tickLeaseRenew, lost if not renewed
	// for tickLeaseTTL (a loop stalled that long on a loaded machine). When
	// a holder dies the supervisor releases its lease, so ticks resume on
	// another worker within about tickLeaseRenew; a holder that hangs
	// instead loses it within tickLeaseTTL + tickLeaseRenew.
	tickLeaseTTL   = 10 * time.Second
	tickLeaseRenew = 2 * time.Second
)

// workerHeader names the response header that says which worker slot
// served a request (only under a supervisor).
const workerHeader = "X-Worker"

// worker is this process's place under a supervisor; the zero value means
// the program runs alone.
type worker struct {
	slot  int      // from 1; 0: not a worker
	ready *os.File // the readiness pipe, nil once written
}

// thisWorker reads the worker slot from the environment.
func thisWorker() (worker, error) {
	v := os.Getenv(workerEnv)
	if v == "" {
		return worker{}, nil
	}
	slot, err := strconv.Atoi(v)
	if err != nil || slot < 1 {
		return worker{}, fmt.Errorf("%s=%q: want a slot number from 1", workerEnv, v)
	}
	signal.Ignore(syscall.SIGHUP) // the supervisor's signal
	return worker{slot: slot, ready: os.NewFile(workerReadyFD, "ready")}, nil
}

// listen returns the inherited socket for a worker, else a new listener on addr.
func (w worker) listen(addr string) (net.Listener, error) {
	if w.slot == 0 {
		return gameserver.Listen("tcp", addr, gameserver.ListenOptions{}) // plain TCP: Shutdown can stop its handshakes
	}
	f := os.NewFile(workerListenFD, "listener")
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("inherited listener: %w", err)
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
// request, and adds the X-Worker header to every response.
func (w worker) handler(h http.Handler, store *game.Store, logger *slog.Logger) http.Handler {
	if w.slot == 0 {
		return h
	}
	slot := strconv.Itoa(w.slot)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if err := store.Sync(r.Context()); err != nil {
			logger.Error("store sync", "err", err) // the page may be one write behind
		}
		rw.Header().Set(workerHeader, slot)
		h.ServeHTTP(rw, r)
	})
}

// metricsAddr is where a worker serves metrics: worker i on the -metrics-addr
// port plus i-1, so each has its own (port 0: a free one each).
func (w worker) metricsAddr(addr string) string {
	if w.slot <= 1 || addr == "" {
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
	return net.JoinHostPort(host, strconv.Itoa(n+w.slot-1))
}

// notifyReady tells the supervisor the worker serves.
func (w *worker) notifyReady() {
	if w.ready == nil {
		return
	}
	io.WriteString(w.ready, "ready\n")
	w.ready.Close()
	w.ready = nil
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
		if n, err := store.Tick(context.Background()); err != nil {
			logger.Error("tick", "err", err)
		} else if n > 0 {
			logger.Debug("tick", "applied", n)
		}
		srv.AfterFunc(untilNextTick(store, interval), next)
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

// A child is one worker process.
type child struct {
	slot    int
	cmd     *exec.Cmd
	started time.Time
	ready   bool
}

// childEvent is a child becoming ready or exiting.
type childEvent struct {
	c     *child
	ready bool  // else it exited
	err   error // its exit status
}

// supervisor runs and watches the worker processes.
type supervisor struct {
	exe     string
	args    []string
	stderr  io.Writer
	log     *slog.Logger
	sockets []*os.File  // by slot-1
	store   *game.Store // to release the leases of workers that die
	events  chan childEvent

	current  []*child   // by slot-1: the worker serving (or starting), nil while a restart waits
	retiring [][]*child // by slot-1: old workers to stop once current is ready
	stopping map[*child]bool
	deaths   []int // by slot-1: quick deaths in a row
	restart  chan int
}

// supervise is the program with -workers other than 1 (see the top of this
// file). It returns nil after a graceful stop (ctx ended), or an error when
// it could not start or workers kept dying.
func supervise(ctx context.Context, o options, args []string, logger *slog.Logger, stderr io.Writer) error {
	n := workerCount(o.workers)
	store, err := openStore(o) // migrate once, and fail here rather than in every worker
	if err != nil {
		return err
	}
	defer store.Close()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("-workers: cannot find this program to start workers: %w", err)
	}
	s := &supervisor{exe: exe, args: args, stderr: stderr, log: logger, store: store, events: make(chan childEvent),
		current: make([]*child, n), retiring: make([][]*child, n), stopping: map[*child]bool{},
		deaths: make([]int, n), restart: make(chan int, n)}
	defer func() {
		for _, f := range s.sockets {
			f.Close()
		}
	}()
	addr := o.addr
	for range n {
		l, err := gameserver.Listen("tcp", addr, gameserver.ListenOptions{ReusePort: true})
		if err != nil {
			return fmt.Errorf("-addr: %w", err)
		}
		addr = l.Addr().String() // the port chosen for :0, for the others
		f, err := l.(*net.TCPListener).File()
		l.Close()
		if err != nil {
			return fmt.Errorf("-addr: %w", err)
		}
		s.sockets = append(s.sockets, f)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	for slot := 1; slot <= n; slot++ {
		if err := s.start(slot); err != nil {
			s.stopAll()
			return err
		}
	}
	logger.Info("serving", "addr", addr, "db", o.db, "tick", o.tick, "workers", n, "pid", os.Getpid())
	for {
		select {
		case <-ctx.Done():
			logger.Info("stopping workers")
			s.stopAll()
			return nil
		case <-hup:
			logger.Info("restarting workers (SIGHUP)")
			s.replaceAll()
		case slot := <-s.restart:
			if s.current[slot-1] == nil {
				if err := s.start(slot); err != nil {
					logger.Error("worker start", "worker", slot, "err", err)
					s.scheduleRestart(slot)
				}
			}
		case ev := <-s.events:
			if err := s.handle(ev); err != nil {
				s.stopAll()
				return err
			}
		}
	}
}

// start starts a worker for slot as the slot's current one.
func (s *supervisor) start(slot int) error {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.exe, s.args...)
	cmd.Env = append(os.Environ(), workerEnv+"="+strconv.Itoa(slot))
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	cmd.ExtraFiles = []*os.File{s.sockets[slot-1], readyW}
	cmd.SysProcAttr = workerProcAttr()
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		readyR.Close()
		return fmt.Errorf("worker %d: %w", slot, err)
	}
	c := &child{slot: slot, cmd: cmd, started: time.Now()}
	s.current[slot-1] = c
	s.log.Info("worker started", "worker", slot, "pid", cmd.Process.Pid)
	go func() {
		// "ready" on the pipe, or EOF if it dies first.
		buf := make([]byte, 16)
		readyR.SetReadDeadline(time.Now().Add(readyTimeout))
		n, err := io.ReadAtLeast(readyR, buf, len("ready\n"))
		readyR.Close()
		if string(buf[:n]) == "ready\n" {
			s.events <- childEvent{c: c, ready: true}
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			s.log.Error("worker not ready in time; killing it", "worker", slot, "pid", cmd.Process.Pid)
			cmd.Process.Kill()
		}
		s.events <- childEvent{c: c, err: cmd.Wait()}
	}()
	return nil
}

// handle acts on one child event; an error means give up.
func (s *supervisor) handle(ev childEvent) error {
	c, i := ev.c, ev.c.slot-1
	if ev.ready {
		if s.current[i] != c {
			return nil
		}
		c.ready = true
		s.log.Info("worker ready", "worker", c.slot, "pid", c.cmd.Process.Pid)
		for _, old := range s.retiring[i] {
			s.stop(old)
		}
		s.retiring[i] = nil
		return nil
	}
	if s.stopping[c] {
		delete(s.stopping, c)
		s.log.Info("worker stopped", "worker", c.slot, "pid", c.cmd.Process.Pid, "status", exitStatus(ev.err))
		return nil
	}
	// An unexpected death: the old worker of a replacement, or the current one.
	for j, old := range s.retiring[i] {
		if old == c {
			s.retiring[i] = append(s.retiring[i][:j], s.retiring[i][j+1:]...)
		}
	}
	life := time.Since(c.started)
	s.log.Warn("worker died", "worker", c.slot, "pid", c.cmd.Process.Pid, "status", exitStatus(ev.err), "after", life.Round(time.Millisecond))
	if err := s.store.ReleaseLease(context.Background(), game.TickLease, leaseHolder(c.cmd.Process.Pid, c.slot)); err != nil {
		s.log.Warn("tick lease release", "worker", c.slot, "err", err)
	}
	if s.current[i] != c {
		return nil
	}
	s.current[i] = nil
	if n := len(s.retiring[i]); n > 0 && !c.ready {
		// A replacement (SIGHUP) that died before serving: a broken new
		// binary, say. The old worker it was to replace goes on serving.
		s.current[i], s.retiring[i] = s.retiring[i][n-1], s.retiring[i][:n-1]
		s.log.Error("replacement worker died before serving; the old one goes on", "worker", c.slot, "pid", s.current[i].cmd.Process.Pid)
		return nil
	}
	if life < shortLife {
		s.deaths[i]++
	} else {
		s.deaths[i] = 1
	}
	if s.deaths[i] >= maxQuickDeaths {
		return fmt.Errorf("worker %d died %d times in a row, each within %v of starting; giving up", c.slot, s.deaths[i], shortLife)
	}
	s.scheduleRestart(c.slot)
	return nil
}

// scheduleRestart starts slot again after its backoff.
func (s *supervisor) scheduleRestart(slot int) {
	wait := min(restartBackoff<<max(s.deaths[slot-1]-1, 0), maxRestartBackoff)
	s.log.Info("worker restart scheduled", "worker", slot, "in", wait)
	time.AfterFunc(wait, func() { s.restart <- slot })
}

// replaceAll starts a fresh worker for every slot; each old one is stopped
// once its replacement is ready.
func (s *supervisor) replaceAll() {
	for i, c := range s.current {
		if c == nil {
			continue // a restart is on its way anyway
		}
		s.retiring[i] = append(s.retiring[i], c)
		s.deaths[i] = 0
		if err := s.start(i + 1); err != nil {
			s.log.Error("worker start", "worker", i+1, "err", err)
			s.current[i] = c // keep the old one serving
			s.retiring[i] = s.retiring[i][:len(s.retiring[i])-1]
		}
	}
}

// stop asks c to shut down gracefully.
func (s *supervisor) stop(c *child) {
	s.stopping[c] = true
	s.log.Info("stopping worker", "worker", c.slot, "pid", c.cmd.Process.Pid)
	c.cmd.Process.Signal(syscall.SIGTERM)
}

// stopAll stops every worker gracefully and waits for them, killing any
// still running after stopGrace.
func (s *supervisor) stopAll() {
	for i, c := range s.current {
		if c != nil {
			s.stop(c)
		}
		for _, old := range s.retiring[i] {
			s.stop(old)
		}
		s.current[i], s.retiring[i] = nil, nil
	}
	kill := time.After(stopGrace)
	for len(s.stopping) > 0 {
		select {
		case ev := <-s.events:
			if !ev.ready {
				s.log.Info("worker stopped", "worker", ev.c.slot, "pid", ev.c.cmd.Process.Pid, "status", exitStatus(ev.err))
				delete(s.stopping, ev.c)
			}
		case <-s.restart:
		case <-kill:
			for c := range s.stopping {
				s.log.Warn("worker did not stop; killing it", "worker", c.slot, "pid", c.cmd.Process.Pid)
				c.cmd.Process.Kill()
			}
			kill = nil
		}
	}
}

// exitStatus describes how a worker ended.
func exitStatus(err error) string {
	if err == nil {
		return "exit 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return err.Error()
}
