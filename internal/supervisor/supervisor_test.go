package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	slotEnv = "SUPERVISOR_TEST_SLOT"
	modeEnv = "SUPERVISOR_TEST_MODE" // a file: "fail" makes new workers exit 3 before they are ready
)

// TestMain runs the test binary as a worker when slotEnv is set: it
// writes its slot on its one inherited file, says ready and waits for
// SIGTERM (or, as the mode file says, fails at once).
func TestMain(m *testing.M) {
	slot, err := Slot(slotEnv)
	if err != nil {
		os.Exit(2)
	}
	if slot == 0 {
		os.Exit(m.Run())
	}
	if mode, _ := os.ReadFile(os.Getenv(modeEnv)); string(mode) == "fail" {
		os.Exit(3)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	f := File(0, "out")
	fmt.Fprintf(f, "slot %d pid %d\n", slot, os.Getpid())
	f.Close()
	if err := Ready(); err != nil {
		os.Exit(4)
	}
	<-term
	os.Exit(0)
}

type harness struct {
	sv     *Supervisor
	log    *testkit.LogBuffer
	mode   string
	out    string // what the workers wrote on their inherited file
	exits  chan [2]int
	done   chan error
	cancel context.CancelFunc
}

func start(t *testing.T, workers int) *harness {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	h := &harness{log: &testkit.LogBuffer{}, mode: filepath.Join(t.TempDir(), "mode"), exits: make(chan [2]int, 10), done: make(chan error, 1)}
	h.out = filepath.Join(t.TempDir(), "out")
	out, err := os.OpenFile(h.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { out.Close() })
	h.sv = New(Config{Exe: exe, Env: append(os.Environ(), modeEnv+"="+h.mode), SlotEnv: slotEnv, Workers: workers,
		Files:  func(int) []*os.File { return []*os.File{out} },
		Logger: slog.New(slog.NewTextHandler(h.log, nil)), StopGrace: 10 * time.Second,
		OnExit: func(slot, pid int) { h.exits <- [2]int{slot, pid} }})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	ready := make(chan struct{})
	go func() { h.done <- h.sv.Run(ctx, func() { close(ready) }) }()
	t.Cleanup(func() {
		cancel()
		<-h.done
		if t.Failed() {
			t.Logf("log:\n%s", h.log)
		}
	})
	select {
	case <-ready:
	case err := <-h.done:
		require.FailNow(t, "Run ended", "%v", err)
	case <-time.After(60 * time.Second):
		require.FailNow(t, "not ready")
	}
	return h
}

var readyLog = regexp.MustCompile(`msg="worker ready" worker=(\d) pid=(\d+)`)

func (h *harness) ready() [][]string { return readyLog.FindAllStringSubmatch(h.log.String(), -1) }

func TestRunAndReload(t *testing.T) {
	// Ensure Run starts every slot before calling ready, Reload replaces
	// each worker (new pids ready, the old ones stopped, exit 0), and a
	// stop stops them all.
	h := start(t, 2)
	r := h.ready()
	require.Len(t, r, 2)
	written, err := os.ReadFile(h.out)
	require.NoError(t, err)
	for _, m := range r {
		assert.Contains(t, string(written), "slot "+m[1]+" pid "+m[2]+"\n", "each worker got its Files from FirstFileFD")
	}
	require.NoError(t, h.sv.Reload(context.Background()))
	r = h.ready()
	require.Len(t, r, 4)
	assert.NotEqual(t, r[0][2], r[2][2])
	assert.NotEqual(t, r[1][2], r[3][2])
	require.Eventually(t, func() bool {
		return len(regexp.MustCompile(`msg="worker stopped" worker=\d pid=\d+ status="exit 0"`).FindAllString(h.log.String(), -1)) == 2
	}, 30*time.Second, 10*time.Millisecond, "the old workers stopped gracefully")
	assert.Empty(t, h.exits, "no OnExit for workers asked to stop")
	h.cancel()
	require.NoError(t, <-h.done)
	h.done <- nil
	assert.Len(t, regexp.MustCompile(`msg="worker stopped"`).FindAllString(h.log.String(), -1), 4)
}

func TestReloadFails(t *testing.T) {
	// Ensure a replacement that exits before it is ready fails Reload with
	// the slot and the reason, and the old worker goes on.
	h := start(t, 1)
	old := h.ready()[0][2]
	require.NoError(t, os.WriteFile(h.mode, []byte("fail"), 0o600))
	err := h.sv.Reload(context.Background())
	require.Error(t, err)
	assert.Regexp(t, `^reload failed: worker 1: the replacement \(pid \d+\) exited before serving \(exit status 3\); the old one \(pid `+old+`\) goes on$`, err.Error())
	assert.NotContains(t, h.log.String(), "stopping worker")
}

func TestDeadWorkerRestarted(t *testing.T) {
	// Ensure a worker that dies is reported to OnExit and started again.
	h := start(t, 2)
	r := h.ready()
	var pid int
	fmt.Sscan(r[0][2], &pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	select {
	case e := <-h.exits:
		assert.Equal(t, pid, e[1])
		assert.Equal(t, r[0][1], fmt.Sprint(e[0]))
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no OnExit")
	}
	require.Eventually(t, func() bool { return len(h.ready()) == 3 }, 30*time.Second, 10*time.Millisecond, "restarted")
	assert.Equal(t, r[0][1], h.ready()[2][1], "the same slot")
}

func TestSlot(t *testing.T) {
	t.Setenv("X_SLOT", "")
	n, err := Slot("X_SLOT")
	assert.NoError(t, err)
	assert.Zero(t, n)
	for _, bad := range []string{"0", "-1", "one"} {
		t.Setenv("X_SLOT", bad)
		_, err := Slot("X_SLOT")
		assert.ErrorContains(t, err, `X_SLOT="`+bad+`": want a slot number from 1`)
	}
}
