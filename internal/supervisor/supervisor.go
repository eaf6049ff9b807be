// Package supervisor runs a fixed number of worker processes of one
// program and keeps them running: it restarts a worker that dies (with a
// growing backoff, giving up after too many quick deaths in a row), replaces
// every worker with a fresh one on Reload without a gap (the old worker of a
// slot is stopped only once its replacement says it is ready), and stops
// them all gracefully.
//
// A worker is the program re-executed with the environment variable
// Config.SlotEnv set to its slot number, from 1. It inherits a readiness
// pipe as descriptor ReadyFD, on which it writes "ready\n" once it serves
// (Ready does that), and the slot's files (Config.Files) from descriptor
// FirstFileFD on, in order: typically listening sockets that the
// supervisor keeps open for the whole run, so that connections waiting in
// them are never lost when a worker dies or is replaced.
//
// The package knows nothing of what the workers do: what a dead worker
// leaves behind (a lease, a lock) is for Config.OnExit to release.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The descriptors a worker inherits (exec.Cmd.ExtraFiles start at 3).
const (
	// ReadyFD is the readiness pipe: write "ready\n" on it once serving.
	ReadyFD = 3
	// FirstFileFD is the first of the slot's Config.Files.
	FirstFileFD = 4
)

// Default supervision settings (the zero values of Config's fields).
const (
	DefaultReadyTimeout   = 60 * time.Second
	DefaultRestartBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
	DefaultShortLife      = 10 * time.Second
	DefaultMaxQuickDeaths = 5
	DefaultStopGrace      = 15 * time.Second
)

// Config says what to run and how to watch it.
type Config struct {
	// Exe and Args are the program every worker runs and its arguments
	// (without the program name).
	Exe  string
	Args []string
	// Env is the workers' environment, SlotEnv=N added to it; nil means
	// the supervisor's own (os.Environ).
	Env []string
	// SlotEnv names the variable that tells a worker its slot; required.
	SlotEnv string
	// Workers is how many slots to run, at least 1.
	Workers int
	// Files returns the files slot's worker inherits from FirstFileFD on;
	// nil means none. The supervisor does not close them.
	Files func(slot int) []*os.File
	// Stderr gets the workers' standard output and error; nil discards them.
	Stderr io.Writer
	// Logger gets a line for every start, readiness, death and stop;
	// required.
	Logger *slog.Logger
	// SysProcAttr, if not nil, is every worker's exec.Cmd.SysProcAttr.
	SysProcAttr *syscall.SysProcAttr
	// OnExit, if not nil, runs on Run's goroutine after a worker of slot
	// with process id pid exited without being asked to (it died, or was
	// killed), before anything else is done about it; stopped workers are
	// left to clean up after themselves.
	OnExit func(slot, pid int)

	// ReadyTimeout bounds how long a worker may take to say it is ready;
	// past it, it is killed (and counts as a death).
	ReadyTimeout time.Duration
	// RestartBackoff is the wait before restarting a worker that died,
	// doubled for each death in a row up to MaxBackoff.
	RestartBackoff, MaxBackoff time.Duration
	// A worker that dies within ShortLife of starting counts towards
	// MaxQuickDeaths in a row; then Run gives up with an error.
	ShortLife      time.Duration
	MaxQuickDeaths int
	// StopGrace is how long stopped workers get after SIGTERM before SIGKILL.
	StopGrace time.Duration
}

// withDefaults fills in what zero means.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ReadyTimeout, DefaultReadyTimeout)
	def(&c.RestartBackoff, DefaultRestartBackoff)
	def(&c.MaxBackoff, DefaultMaxBackoff)
	def(&c.ShortLife, DefaultShortLife)
	def(&c.StopGrace, DefaultStopGrace)
	if c.MaxQuickDeaths <= 0 {
		c.MaxQuickDeaths = DefaultMaxQuickDeaths
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	return c
}

// A child is one worker process.
type child struct {
	slot    int
	cmd     *exec.Cmd
	started time.Time
	ready   bool
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// childEvent is a child becoming ready or exiting.
type childEvent struct {
	c     *child
	ready bool  // else it exited
	err   error // its exit status
}

// reload is one Reload call under way.
type reload struct {
	waiting map[int]bool // slots whose replacement is not ready yet
	failed  []string     // why replacements failed
	done    chan error
}

// Supervisor runs the workers of one Config; see the package doc.
type Supervisor struct {
	cfg    Config
	events chan childEvent
	reload chan chan error

	// Touched only by Run's goroutine:
	current  []*child   // by slot-1: the worker serving (or starting), nil while a restart waits
	retiring [][]*child // by slot-1: old workers to stop once current is ready
	stopping map[*child]bool
	deaths   []int // by slot-1: quick deaths in a row
	restart  chan int
	pending  *reload      // the reload under way, nil if none
	queued   []chan error // Reload calls waiting for it
}

// New returns a Supervisor for cfg; Run starts it.
func New(cfg Config) *Supervisor {
	cfg = cfg.withDefaults()
	n := cfg.Workers
	return &Supervisor{cfg: cfg, events: make(chan childEvent), reload: make(chan chan error),
		current: make([]*child, n), retiring: make([][]*child, n), stopping: map[*child]bool{},
		deaths: make([]int, n), restart: make(chan int, n)}
}

// Run starts every worker, waits until all are ready, calls ready (if not
// nil), and then supervises them until ctx ends, when it stops them all
// gracefully and returns nil. It returns an error if a worker cannot be
// started or become ready at first, or if one keeps dying (MaxQuickDeaths
// in a row), after stopping the others.
func (s *Supervisor) Run(ctx context.Context, ready func()) error {
	if s.cfg.Workers < 1 || s.cfg.SlotEnv == "" || s.cfg.Logger == nil {
		return errors.New("supervisor: Config needs Workers >= 1, SlotEnv and Logger")
	}
	for slot := 1; slot <= s.cfg.Workers; slot++ {
		if err := s.start(slot); err != nil {
			s.stopAll()
			return err
		}
	}
	if err := s.awaitReady(ctx); err != nil {
		s.stopAll()
		return err
	}
	if ready != nil {
		ready()
	}
	for {
		select {
		case <-ctx.Done():
			s.cfg.Logger.Info("stopping workers")
			s.stopAll()
			return nil
		case done := <-s.reload:
			s.replaceAll(done)
		case slot := <-s.restart:
			if s.current[slot-1] == nil {
				if err := s.start(slot); err != nil {
					s.cfg.Logger.Error("worker start", "worker", slot, "err", err)
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

// awaitReady waits until every first worker is ready; one that dies first
// is an error (a program that cannot start is not retried at start).
func (s *Supervisor) awaitReady(ctx context.Context) error {
	for left := s.cfg.Workers; left > 0; {
		select {
		case <-ctx.Done():
			return nil // Run's loop sees it next and stops them
		case ev := <-s.events:
			c := ev.c
			if ev.ready {
				c.ready = true
				left--
				s.cfg.Logger.Info("worker ready", "worker", c.slot, "pid", c.pid())
				continue
			}
			s.current[c.slot-1] = nil
			s.exited(c)
			return fmt.Errorf("worker %d exited before serving (%s)", c.slot, exitStatus(ev.err))
		}
	}
	return nil
}

// Reload replaces every worker with a fresh one, each old worker being
// stopped once its replacement is ready, and returns when all are
// replaced (nil), or when a replacement could not start or died before it
// was ready: then the old worker of that slot goes on serving and the
// error says which and why. A slot whose worker is waiting to be
// restarted is left to that restart. Reload may be called from any
// goroutine while Run runs; calls made during a reload wait for it and
// then start one of their own.
func (s *Supervisor) Reload(ctx context.Context) error {
	done := make(chan error, 1)
	select {
	case s.reload <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start starts a worker for slot as the slot's current one.
func (s *Supervisor) start(slot int) error {
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.cfg.Exe, s.cfg.Args...)
	cmd.Env = append(append([]string(nil), s.cfg.Env...), s.cfg.SlotEnv+"="+strconv.Itoa(slot))
	cmd.Stdout, cmd.Stderr = s.cfg.Stderr, s.cfg.Stderr
	cmd.ExtraFiles = []*os.File{readyW}
	if s.cfg.Files != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.cfg.Files(slot)...)
	}
	cmd.SysProcAttr = s.cfg.SysProcAttr
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		readyR.Close()
		return fmt.Errorf("worker %d: %w", slot, err)
	}
	c := &child{slot: slot, cmd: cmd, started: time.Now()}
	s.current[slot-1] = c
	s.cfg.Logger.Info("worker started", "worker", slot, "pid", c.pid())
	go s.watch(c, readyR)
	return nil
}

// watch reports c's readiness ("ready" on the pipe, or EOF if it dies
// first; killed if neither comes within ReadyTimeout) and then its exit.
func (s *Supervisor) watch(c *child, readyR *os.File) {
	buf := make([]byte, 16)
	readyR.SetReadDeadline(time.Now().Add(s.cfg.ReadyTimeout))
	n, err := io.ReadAtLeast(readyR, buf, len(readyLine))
	readyR.Close()
	if string(buf[:n]) == readyLine {
		s.events <- childEvent{c: c, ready: true}
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		s.cfg.Logger.Error("worker not ready in time; killing it", "worker", c.slot, "pid", c.pid(), "within", s.cfg.ReadyTimeout)
		c.cmd.Process.Kill()
	}
	s.events <- childEvent{c: c, err: c.cmd.Wait()}
}

// handle acts on one child event; an error means give up.
func (s *Supervisor) handle(ev childEvent) error {
	c, i := ev.c, ev.c.slot-1
	if ev.ready {
		if s.current[i] != c {
			return nil
		}
		c.ready = true
		s.cfg.Logger.Info("worker ready", "worker", c.slot, "pid", c.pid())
		for _, old := range s.retiring[i] {
			s.stop(old)
		}
		s.retiring[i] = nil
		s.reloaded(c.slot, "")
		return nil
	}
	if s.stopping[c] {
		delete(s.stopping, c)
		s.cfg.Logger.Info("worker stopped", "worker", c.slot, "pid", c.pid(), "status", exitStatus(ev.err))
		return nil
	}
	// An unexpected death: the old worker of a replacement, or the current one.
	for j, old := range s.retiring[i] {
		if old == c {
			s.retiring[i] = append(s.retiring[i][:j], s.retiring[i][j+1:]...)
			break
		}
	}
	life := time.Since(c.started)
	s.cfg.Logger.Warn("worker died", "worker", c.slot, "pid", c.pid(), "status", exitStatus(ev.err), "after", life.Round(time.Millisecond))
	s.exited(c)
	if s.current[i] != c {
		return nil
	}
	s.current[i] = nil
	if n := len(s.retiring[i]); n > 0 && !c.ready {
		// A replacement (Reload) that died before serving: a broken new
		// binary, say. The old worker it was to replace goes on serving.
		s.current[i], s.retiring[i] = s.retiring[i][n-1], s.retiring[i][:n-1]
		s.cfg.Logger.Error("replacement worker died before serving; the old one goes on", "worker", c.slot, "pid", s.current[i].pid(),
			"replacement", c.pid(), "status", exitStatus(ev.err))
		s.reloaded(c.slot, fmt.Sprintf("worker %d: the replacement (pid %d) exited before serving (%s); the old one (pid %d) goes on",
			c.slot, c.pid(), exitStatus(ev.err), s.current[i].pid()))
		return nil
	}
	if life < s.cfg.ShortLife {
		s.deaths[i]++
	} else {
		s.deaths[i] = 1
	}
	if s.deaths[i] >= s.cfg.MaxQuickDeaths {
		return fmt.Errorf("worker %d died %d times in a row, each within %v of starting; giving up", c.slot, s.deaths[i], s.cfg.ShortLife)
	}
	s.scheduleRestart(c.slot)
	return nil
}

// exited runs the OnExit hook for c.
func (s *Supervisor) exited(c *child) {
	if s.cfg.OnExit != nil {
		s.cfg.OnExit(c.slot, c.pid())
	}
}

// scheduleRestart starts slot again after its backoff.
func (s *Supervisor) scheduleRestart(slot int) {
	wait := min(s.cfg.RestartBackoff<<max(s.deaths[slot-1]-1, 0), s.cfg.MaxBackoff)
	s.cfg.Logger.Info("worker restart scheduled", "worker", slot, "in", wait)
	time.AfterFunc(wait, func() { s.restart <- slot })
}

// replaceAll starts a fresh worker for every slot (Reload); each old one
// is stopped once its replacement is ready. done gets the outcome once
// every slot's replacement is ready or has failed.
func (s *Supervisor) replaceAll(done chan error) {
	if s.pending != nil {
		s.queued = append(s.queued, done) // one at a time: this one starts when the last one ends
		return
	}
	s.cfg.Logger.Info("replacing workers")
	r := &reload{waiting: map[int]bool{}, done: done}
	s.pending = r
	for i, c := range s.current {
		if c == nil {
			continue // a restart is on its way anyway
		}
		s.retiring[i] = append(s.retiring[i], c)
		s.deaths[i] = 0
		r.waiting[i+1] = true
		if err := s.start(i + 1); err != nil {
			s.cfg.Logger.Error("worker start", "worker", i+1, "err", err)
			s.current[i] = c // keep the old one serving
			s.retiring[i] = s.retiring[i][:len(s.retiring[i])-1]
			s.reloaded(i+1, fmt.Sprintf("worker %d: the replacement could not start: %v; the old one (pid %d) goes on", i+1, err, c.pid()))
		}
	}
	s.finishReload()
}

// reloaded records slot's replacement ready (why empty) or failed.
func (s *Supervisor) reloaded(slot int, why string) {
	r := s.pending
	if r == nil || !r.waiting[slot] {
		return
	}
	delete(r.waiting, slot)
	if why != "" {
		r.failed = append(r.failed, why)
	}
	s.finishReload()
}

// finishReload answers the pending reload once no slot is waiting.
func (s *Supervisor) finishReload() {
	r := s.pending
	if r == nil || len(r.waiting) > 0 {
		return
	}
	s.pending = nil
	if len(r.failed) > 0 {
		r.done <- fmt.Errorf("reload failed: %s", strings.Join(r.failed, "; "))
	} else {
		s.cfg.Logger.Info("workers replaced")
		r.done <- nil
	}
	if len(s.queued) > 0 {
		next := s.queued[0]
		s.queued = s.queued[1:]
		s.replaceAll(next)
	}
}

// stop asks c to shut down gracefully.
func (s *Supervisor) stop(c *child) {
	s.stopping[c] = true
	s.cfg.Logger.Info("stopping worker", "worker", c.slot, "pid", c.pid())
	c.cmd.Process.Signal(syscall.SIGTERM)
}

// stopAll stops every worker gracefully and waits for them, killing any
// still running after StopGrace. A reload under way fails.
func (s *Supervisor) stopAll() {
	cut := errors.New("reload cut short: the workers are stopping")
	if r := s.pending; r != nil {
		s.pending = nil
		r.done <- cut
	}
	for _, done := range s.queued {
		done <- cut
	}
	s.queued = nil
	for i, c := range s.current {
		if c != nil {
			s.stop(c)
		}
		for _, old := range s.retiring[i] {
			s.stop(old)
		}
		s.current[i], s.retiring[i] = nil, nil
	}
	kill := time.After(s.cfg.StopGrace)
	for len(s.stopping) > 0 {
		select {
		case ev := <-s.events:
			if !ev.ready {
				s.cfg.Logger.Info("worker stopped", "worker", ev.c.slot, "pid", ev.c.pid(), "status", exitStatus(ev.err))
				delete(s.stopping, ev.c)
			}
		case <-s.restart:
		case done := <-s.reload:
			done <- cut
		case <-kill:
			for c := range s.stopping {
				s.cfg.Logger.Warn("worker did not stop; killing it", "worker", c.slot, "pid", c.pid())
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

// readyLine is what a worker writes on its readiness pipe.
const readyLine = "ready\n"

// Slot returns this process's slot as a worker, from the environment
// variable env (Config.SlotEnv): 0 and no error if it is not set, an
// error if it is set to anything but a slot number from 1.
func Slot(env string) (int, error) {
	v := os.Getenv(env)
	if v == "" {
		return 0, nil
	}
	slot, err := strconv.Atoi(v)
	if err != nil || slot < 1 {
		return 0, fmt.Errorf("%s=%q: want a slot number from 1", env, v)
	}
	return slot, nil
}

// Ready tells the supervisor this worker serves: it writes "ready\n" on
// the readiness pipe (ReadyFD) and closes it. Call it once, from a worker
// only (Slot > 0).
func Ready() error {
	f := os.NewFile(ReadyFD, "ready")
	defer f.Close()
	_, err := io.WriteString(f, readyLine)
	return err
}

// File returns the i-th of the slot's Config.Files (from 0) as inherited
// by a worker, named name.
func File(i int, name string) *os.File {
	return os.NewFile(uintptr(FirstFileFD+i), name)
}
