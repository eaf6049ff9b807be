//go:build linux && !gameserver_portable

package gameserver_test

import (
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

// spinCPU holds the calling thread (the loop, in a handler) until it has
// run d on a CPU, however long that takes on a busy machine.
func spinCPU(d time.Duration) {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	for end := ts.Nano() + int64(d); ts.Nano() < end; {
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	}
}

// holServer serves the head-of-line scenes of these tests: /block holds
// the loop until released, /slow runs 10 ms on a CPU, each probe (/probe1,
// /probe2) runs 2 ms on a CPU, /warm nothing.
type holServer struct {
	addr    string
	s       *gameserver.Server
	entered chan struct{}
	release chan struct{}
}

func startHOL(t testing.TB, cfg gameserver.Config) *holServer {
	t.Helper()
	h := &holServer{entered: make(chan struct{}, 1), release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /block", func(w http.ResponseWriter, r *http.Request) {
		h.entered <- struct{}{}
		<-h.release
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) { spinCPU(10 * time.Millisecond) })
	mux.HandleFunc("GET /blockslow", func(w http.ResponseWriter, r *http.Request) {
		h.entered <- struct{}{}
		<-h.release
		spinCPU(10 * time.Millisecond)
	})
	probe := func(w http.ResponseWriter, r *http.Request) { spinCPU(2 * time.Millisecond) }
	mux.HandleFunc("GET /probe1", probe)
	mux.HandleFunc("GET /probe2", probe)
	mux.HandleFunc("GET /warm", func(w http.ResponseWriter, r *http.Request) {})
	cfg.Handler = mux
	h.addr, h.s = startServer(t, cfg)
	return h
}

// probeBehindSlow has the loop read a request for /slow and then one for
// probe in the same turn (the loop is held meanwhile by /block), so the
// probe's handler starts only after the 10 ms of /slow, and returns the
// probe route's figures.
func (h *holServer) probeBehindSlow(t *testing.T, probe string) gameserver.RouteWaits {
	t.Helper()
	h.scene(t, probe)
	route := "GET " + probe
	var got gameserver.RouteWaits
	eventually(t, func() bool {
		for _, r := range h.s.Stats().WaitByRoute {
			if r.Route == route {
				got = r
			}
		}
		return got.HeadOfLine.Samples == 1
	}, "the probe attributed: %+v", h.s.Stats().WaitByRoute)
	return got
}

// scene plays probeBehindSlow's scene: /block holds the loop while a
// request for /slow and then one for probe arrive, read in one turn.
func (h *holServer) scene(t testing.TB, probe string) {
	t.Helper()
	block, slow, p := dial(t, h.addr), dial(t, h.addr), dial(t, h.addr)
	for _, c := range []*client{block, slow, p} {
		c.get("/warm") // each is an open connection in the epoll set
	}
	block.writeAll("GET /block HTTP/1.1\r\nHost: t\r\n\r\n")
	<-h.entered
	slow.writeAll("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
	p.writeAll("GET " + probe + " HTTP/1.1\r\nHost: t\r\n\r\n") // behind /slow in the kernel's ready list
	h.release <- struct{}{}
	for _, c := range []*client{block, slow, p} {
		resp, _ := c.readResponse(http.MethodGet)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
}

func TestWaitHeadOfLine(t *testing.T) {
	// Ensure a probe read in the same turn as a request whose handler
	// runs 10 ms shows at least 8 ms of head-of-line wait, its handler's
	// own time beside it, and a wait for a CPU no larger than the loop's
	// whole wait for one meanwhile (under 1 ms on an idle machine); the
	// slow-request log has the same figures.
	var logs testkit.LogBuffer
	h := startHOL(t, gameserver.Config{SlowRequest: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var before gameserver.Stats
	eventually(t, func() bool { before = h.s.Stats(); return before.Wait.Known }, "Linux reads the loop thread's schedstat")
	probe := h.probeBehindSlow(t, "/probe1")
	after := h.s.Stats()

	machine := after.Wait.LoopCPUWait - before.Wait.LoopCPUWait
	t.Logf("probe: head-of-line %v, CPU wait %v, handler %v; the loop waited %v for a CPU meanwhile",
		probe.HeadOfLine.Max, probe.CPUWait.Max, probe.Handler.Max, machine)
	assert.GreaterOrEqual(t, probe.HeadOfLine.Max, 8*time.Millisecond, "behind /slow's 10 ms")
	assert.GreaterOrEqual(t, probe.Handler.Max, 2*time.Millisecond, "its own 2 ms")
	assert.LessOrEqual(t, probe.CPUWait.Max, machine, "at most what the loop waited for a CPU")
	if machine < time.Millisecond {
		assert.Less(t, probe.CPUWait.Max, time.Millisecond, "an idle machine")
	}
	assert.GreaterOrEqual(t, after.Wait.HeadOfLine.Samples, uint64(4), "the warm-ups, /slow and the probe")
	assert.Equal(t, after.Wait.HeadOfLine.Samples, after.Wait.Handler.Samples)

	var entry gameserver.SlowRequest
	for _, e := range h.s.SlowRequests() {
		if e.Path == "/probe1" {
			entry = e
		}
	}
	require.True(t, entry.Attributed, "the probe is in the slow-request log, attributed")
	assert.Equal(t, probe.HeadOfLine.Max, entry.HeadOfLine, "the same figures as the histogram")
	assert.Equal(t, probe.CPUWait.Max, entry.CPUWait)
	assert.Contains(t, logs.String(), "head_of_line=")
	assert.NotContains(t, logs.String(), "head_of_line=unknown")
}

func TestWaitHeadOfLineArrivedDuringHandler(t *testing.T) {
	// Ensure a probe that arrives while the loop runs another request's
	// handler, and is read only in the next turn, waits from its arrival:
	// at least 8 ms behind the handler's 10 ms, not just from the turn
	// that read it (the head-of-line blocking of a loaded server, where
	// a probe seldom lands in the same turn as the slow page).
	h := startHOL(t, gameserver.Config{})
	var before gameserver.Stats
	eventually(t, func() bool { before = h.s.Stats(); return before.Wait.Known }, "Linux reads the loop thread's schedstat")
	slow, p := dial(t, h.addr), dial(t, h.addr)
	for _, c := range []*client{slow, p} {
		c.get("/warm")
	}
	slow.writeAll("GET /blockslow HTTP/1.1\r\nHost: t\r\n\r\n")
	<-h.entered                                           // the loop is in /blockslow's handler
	p.writeAll("GET /probe1 HTTP/1.1\r\nHost: t\r\n\r\n") // arrives during it
	time.Sleep(time.Millisecond)                          // on the socket before the handler goes on
	h.release <- struct{}{}                               // its 10 ms, then the next turn reads the probe
	for _, c := range []*client{slow, p} {
		resp, _ := c.readResponse(http.MethodGet)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	var got gameserver.RouteWaits
	eventually(t, func() bool {
		for _, r := range h.s.Stats().WaitByRoute {
			if r.Route == "GET /probe1" {
				got = r
			}
		}
		return got.HeadOfLine.Samples == 1
	}, "the probe attributed: %+v", h.s.Stats().WaitByRoute)
	machine := h.s.Stats().Wait.LoopCPUWait - before.Wait.LoopCPUWait
	t.Logf("probe: head-of-line %v, CPU wait %v; the loop waited %v for a CPU meanwhile", got.HeadOfLine.Max, got.CPUWait.Max, machine)
	assert.GreaterOrEqual(t, got.HeadOfLine.Max+got.CPUWait.Max, 10*time.Millisecond, "its whole wait behind /blockslow")
	// The CPU wait taken for head-of-line is the error of interpolating
	// within the turn before, no more than the loop's whole wait for one.
	assert.GreaterOrEqual(t, got.HeadOfLine.Max, 8*time.Millisecond-machine, "behind /blockslow's 10 ms")
}

func TestWaitCPUHog(t *testing.T) {
	// Ensure that with a busy thread pinned to the loop's CPU, the probe's
	// wait for a CPU grows and its head-of-line wait does not: the same
	// scene as TestWaitHeadOfLine, first alone, then beside the hog.
	cpu := lastCPU(t)
	h := startHOL(t, gameserver.Config{LoopCPUs: []int{cpu}})

	alone := h.probeBehindSlow(t, "/probe1")
	stop := hogCPU(t, cpu)
	hogged := h.probeBehindSlow(t, "/probe2")
	stop()
	t.Logf("alone: head-of-line %v, CPU wait %v; beside a hog on CPU %d: head-of-line %v, CPU wait %v",
		alone.HeadOfLine.Max, alone.CPUWait.Max, cpu, hogged.HeadOfLine.Max, hogged.CPUWait.Max)
	// The hog takes its share of the CPU while /slow runs 10 ms on it,
	// however busy the machine; alone, the probe waits for a CPU only as
	// long as the rest of the machine makes it.
	assert.GreaterOrEqual(t, hogged.CPUWait.Max, 2*time.Millisecond, "the machine's share grows")
	if alone.CPUWait.Max < time.Millisecond {
		assert.Greater(t, hogged.CPUWait.Max, alone.CPUWait.Max, "the machine's share grows")
	}
	// Head-of-line is the rest of the wait: /slow's 10 ms on a CPU, and
	// any time the thread was off a CPU for the process's own reasons (the
	// Go scheduler, the garbage collector), which the hog may stretch.
	assert.Less(t, hogged.HeadOfLine.Max, 2*alone.HeadOfLine.Max, "the loop's does not grow (as the machine's does)")
	assert.GreaterOrEqual(t, hogged.HeadOfLine.Max, 5*time.Millisecond, "the probe still waited behind /slow")
}

// lastCPU returns the highest-numbered CPU the process may run on.
func lastCPU(t testing.TB) int {
	t.Helper()
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	cpu := -1
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			cpu = i
		}
	}
	require.GreaterOrEqual(t, cpu, 0)
	return cpu
}

// hogCPU keeps a thread pinned to cpu busy until the returned function is
// called. The thread is never given back to the Go runtime: it exits with
// its goroutine.
func hogCPU(t testing.TB, cpu int) (stop func()) {
	t.Helper()
	var done atomic.Bool
	pinned := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
		var set unix.CPUSet
		set.Set(cpu)
		pinned <- unix.SchedSetaffinity(0, &set)
		for !done.Load() {
		}
	}()
	require.NoError(t, <-pinned)
	t.Cleanup(func() { done.Store(true) })
	return func() { done.Store(true) }
}

func TestLoopCPUs(t *testing.T) {
	// Ensure LoopCPUs pins the loop's thread (a handler runs on it), and
	// Serve refuses a CPU the system has not.
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	cpu := 0
	for !set.IsSet(cpu) {
		cpu++
	}
	var onLoop unix.CPUSet
	addr, _ := startServer(t, gameserver.Config{LoopCPUs: []int{cpu},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { unix.SchedGetaffinity(0, &onLoop) })})
	resp, _ := dial(t, addr).get("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, onLoop.Count())
	assert.True(t, onLoop.IsSet(cpu))

	l, err := gameserver.Listen("tcp", "127.0.0.1:0", gameserver.ListenOptions{})
	require.NoError(t, err)
	err = gameserver.New(gameserver.Config{LoopCPUs: []int{-1}}).Serve(l)
	assert.ErrorContains(t, err, "no CPU -1")
}

func TestLongestTurnOwn(t *testing.T) {
	// Ensure Stats.LongestTurnOwnRecent keeps a turn's CPU time and
	// leaves out its wait for a CPU: a handler that runs 20 ms of its
	// thread's CPU beside a hog on the loop's CPU makes a turn of its 20
	// ms plus the hog's share, and an own time of the 20 ms.
	const spin = 20 * time.Millisecond
	cpu := lastCPU(t)
	addr, s := startServer(t, gameserver.Config{LoopCPUs: []int{cpu},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var start, now unix.Timespec
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &start)
			for now = start; time.Duration(now.Nano()-start.Nano()) < spin; {
				unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &now)
			}
		})})
	c := dial(t, addr)
	resp, _ := c.get("/") // the first turns, not sampled yet
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, s.Stats().Wait.Known, "the loop reads its thread's account")

	stop := hogCPU(t, cpu)
	resp, _ = c.get("/")
	stop()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var st gameserver.Stats // the turn ends after its response is written
	eventually(t, func() bool { st = s.Stats(); return st.LongestTurnOwnRecent >= spin }, "the spin's turn counted")
	t.Logf("beside a hog on CPU %d: longest turn %v, its own %v", cpu, st.LongestTurnRecent, st.LongestTurnOwnRecent)
	assert.GreaterOrEqual(t, st.LongestTurnRecent-st.LongestTurnOwnRecent, 5*time.Millisecond,
		"the hog's share of the CPU (about as long as the spin) is left out")
}
