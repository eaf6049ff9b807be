package handlers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// streamClientsEnv names the environment variable that makes this test
// binary a client process holding event streams (TestStreamClients): the
// streams' client ends live in processes of their own, at most
// streamsPerChild each, because the open file limit (20,000 here, which
// only CAP_SYS_RESOURCE raises) cannot hold both ends of 10,000 streams
// in one process, nor 20,000 client ends and the child's own files.
const streamClientsEnv = "STATESECRETS_STREAM_CLIENTS"

// streamsPerChild is how many streams one TestStreamClients process holds
// at most.
const streamsPerChild = 10_000

// streamsPerAddr is how many streams a client address holds, under
// LiveStreamsPerAddress and the address's open burst.
const streamsPerAddr = 50

// TestStreamClients is not a test: run by BenchmarkLiveStreams and
// BenchmarkLiveBroadcast as a child process (streamClientsEnv="ADDR FILE
// FIRST [KIND]"), it opens a stream for each tid in FILE (one a line) from
// addresses 127.1.x.y, streamsPerAddr each, numbering the streams from
// FIRST (so that children share no address), reads each one's hello,
// prints "ready", and then reads and discards what the server sends until
// its stdin closes. With KIND, each time every stream has had one more
// event of that kind it prints "all" and the time (Unix nanoseconds).
func TestStreamClients(t *testing.T) {
	spec := os.Getenv(streamClientsEnv)
	if spec == "" {
		t.Skip("a helper process of BenchmarkLiveStreams")
	}
	f := append(strings.Fields(spec), "")
	addr, file, kind := f[0], f[1], f[3]
	first, err := strconv.Atoi(f[2])
	require.NoError(t, err)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	tids := strings.Fields(string(data))
	conns := make([]net.Conn, len(tids))
	got := counter{kind: "event: " + kind + "\n", n: int64(len(tids))}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				a := (first + i) / streamsPerAddr
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(a/250), byte(a%250+1))}}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					t.Errorf("dial: %v", err)
					continue
				}
				fmt.Fprintf(c, "GET /game/events?tid=%s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", tids[i], addr)
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						t.Errorf("stream %d: %v", i, err)
						break
					}
					if strings.HasPrefix(line, "event: hello") {
						break
					}
				}
				conns[i] = c
				if kind == "" {
					go io.Copy(io.Discard, r)
				} else {
					go got.read(r)
				}
			}
		})
	}
	for i := range tids {
		next <- i
	}
	close(next)
	wg.Wait()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// counter counts the events of one kind on every stream, and prints "all"
// and the time each time every stream has had one more.
type counter struct {
	kind string // the event's first line
	n    int64  // streams
	seen atomic.Int64
}

func (c *counter) read(r *bufio.Reader) {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if line == c.kind && c.seen.Add(1)%c.n == 0 {
			fmt.Println("all", time.Now().UnixNano())
		}
	}
}

// BenchmarkLiveStreams holds 10,000 event streams open, one per player
// (the worst case: every tick reads 10,000 players' figures and sends
// 10,000 different messages), on a gameserver loop polling the hub every
// LivePollInterval, its runs of changes going on at the loop's next turn
// (SetLiveSoon), as cmd/gameserver does, with the game's clock running.
// The loop runs on CPU 0 and the clients on the others (loopCPUs), as
// make capacity pins them.
// It reports the loop's own longest turn, from Stats.LongestTurnRecent:
// over 21 s with only heartbeats and session checks (heartbeat-turn-ms),
// and over each tick, PayTicks of them an iteration (one a payday):
// Store.TickStep on the loop, step by step as cmd/gameserver runs it, and
// the 2 s after it,
// in which it reaches every stream (tick-turn-ms); and of the latter the
// longest less the loop thread's wait for a CPU during it
// (tick-turn-own-ms, Stats.LongestTurnOwnRecent: what the turn held the
// loop on a CPU of its own; the rest of tick-turn-ms was the machine's). With
// STATESECRETS_BENCH_TRACE=DIR it writes a Go execution trace of the
// seconds before each tick that had a turn over 10 ms to DIR
// (benchTraceEnv). Run it alone:
//
//	flock /tmp/heavy.lock go test ./handlers -run '^$' -bench LiveStreams -benchtime 1x
func BenchmarkLiveStreams(b *testing.B) {
	const streams = 10_000
	e := newEnv(b)
	ctx := context.Background()
	file := seedSessions(b, e, streams)
	srv := gameserver.New(gameserver.Config{Handler: e.srv, LoopCPUs: loopCPUs()})
	// The longest poll, drain and tick step after the opening, each in
	// wall time and in the loop thread's CPU time, and for the longest of
	// each its CPU time and the time the thread waited on a run queue (for
	// a core of this shared 2-core machine): what is left of its wall time
	// the thread was blocked, in practice on the disk (an fsync in a commit).
	var measure bool
	var poll, drain, step loopTime
	timed := func(t *loopTime, f func()) {
		start, cpu, wait := time.Now(), threadCPU(), runWait()
		f()
		if measure {
			d, c, w := time.Since(start), threadCPU()-cpu, runWait()-wait
			if d > t.wall {
				t.wall, t.cpuOfLongest, t.waitOfLongest = d, c, w
			}
			t.cpu = max(t.cpu, c)
		}
	}
	srv.Every(handlers.LivePollInterval, func() { timed(&poll, func() { e.srv.PollLive(ctx) }) })
	e.srv.SetLiveSoon(func(f func()) { srv.Post(func() { timed(&drain, f) }) })
	e.srv.SetLiveTurn(srv.TurnElapsed)
	holdStreams(b, e, srv, file, streams, "")

	time.Sleep(21 * time.Second) // the opening turns leave LongestTurnRecent's window
	beat := srv.Stats().LongestTurnRecent
	require.NoError(b, srv.Post(func() { measure = true }))
	var tick, tickOwn time.Duration
	tr := traceSlowTurns(b, srv)
	for b.Loop() {
		for range game.PayTicks { // one of them a payday
			sent := srv.Stats().BytesWritten
			e.clock.Add(game.DefaultTickInterval)
			// On the loop, step by step, as cmd/gameserver runs it: a
			// payday takes several steps (Store.TickStep), 2 ms apart.
			for more := true; more; time.Sleep(2 * time.Millisecond) {
				done := make(chan error, 1)
				require.NoError(b, srv.Post(func() {
					var err error
					timed(&step, func() { _, more, err = e.store.TickStep(ctx) })
					done <- err
				}))
				require.NoError(b, <-done)
			}
			time.Sleep(2 * time.Second)
			require.Greater(b, srv.Stats().BytesWritten, sent+uint64(streams)*100, "the tick reached the streams")
			st := srv.Stats()
			tick, tickOwn = max(tick, st.LongestTurnRecent), max(tickOwn, st.LongestTurnOwnRecent)
			tr.check(b)
		}
	}
	b.ReportMetric(float64(beat.Microseconds())/1000, "heartbeat-turn-ms")
	b.ReportMetric(float64(tick.Microseconds())/1000, "tick-turn-ms")
	b.ReportMetric(float64(tickOwn.Microseconds())/1000, "tick-turn-own-ms")
	b.ReportMetric(0, "ns/op")
	var times [3]loopTime
	done := make(chan struct{})
	require.NoError(b, srv.Post(func() { times = [3]loopTime{step, poll, drain}; close(done) }))
	<-done
	for i, name := range []string{"step", "poll", "drain"} {
		b.ReportMetric(float64(times[i].cpu.Microseconds())/1000, name+"-cpu-ms")
	}
	b.ReportMetric(float64(step.blocked().Microseconds())/1000, "step-blocked-ms")
	ck := e.store.Checkpoints()
	b.Logf("checkpointer: %d checkpoints (longest %v), %d WAL restarts off the loop (longest %v), %d errors",
		ck.Runs, ck.Longest, ck.Restarts, ck.LongestRestart, ck.Errors)
	b.Logf("%d streams: heartbeat turns at most %v over 21 s, turns during ticks at most %v (%v without their wait for a CPU); streams cut %d; "+
		"during the ticks, at most (wall, CPU; of the longest, CPU, run queue): a step of Store.TickStep %v, a PollLive %v, a share %v",
		streams, beat, tick, tickOwn, srv.Stats().StreamsCut, times[0], times[1], times[2])
}

// seedSessions seeds e's game with n players and a session each, and
// returns the file of their session ids, one a line.
func seedSessions(b *testing.B, e *env, n int) string {
	ctx := context.Background()
	_, err := e.store.Seed(ctx, n)
	require.NoError(b, err)
	var tids strings.Builder
	for id := int64(1); id <= int64(n); id++ {
		sess, err := e.store.CreateSession(ctx, id)
		require.NoError(b, err)
		tids.WriteString(sess.ID + "\n")
	}
	file := b.TempDir() + "/tids"
	require.NoError(b, os.WriteFile(file, []byte(tids.String()), 0o600))
	return file
}

// holdStreams serves srv on loopback, with e's game clock running, and
// opens a stream for each of the n sessions in file from child processes
// (TestStreamClients, streamsPerChild at most each, counting events of
// kind unless it is empty), on clientCPUs. It returns the children once
// every stream is open; all stops with the benchmark.
func holdStreams(b *testing.B, e *env, srv *gameserver.Server, file string, n int, kind string) streamChildren {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	go srv.Serve(l)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	go runClock(e.clock, stop) // heartbeats come due

	data, err := os.ReadFile(file)
	require.NoError(b, err)
	tids := strings.Fields(string(data))
	require.Len(b, tids, n)
	var children streamChildren
	for first := 0; first < n; first += streamsPerChild {
		part := fmt.Sprintf("%s.%d", file, first)
		require.NoError(b, os.WriteFile(part, []byte(strings.Join(tids[first:min(first+streamsPerChild, n)], "\n")), 0o600))
		children = append(children, startStreamChild(b, l.Addr().String(), part, first, kind))
	}
	for _, r := range children {
		line, err := r.ReadString('\n')
		require.NoError(b, err)
		require.Equal(b, "ready\n", line)
	}
	// The last hello may reach the child before the turn that wrote it
	// publishes its counters.
	require.Eventually(b, func() bool { return srv.Stats().Streams == n }, 5*time.Second, 10*time.Millisecond,
		"streams open")
	return children
}

// startStreamChild starts a TestStreamClients process on clientCPUs for
// the tids in file, numbered from first, and returns its output; it stops
// with the benchmark.
func startStreamChild(b *testing.B, addr, file string, first int, kind string) *bufio.Reader {
	child := exec.Command(os.Args[0], "-test.run=^TestStreamClients$", "-test.v=false")
	if cpus := clientCPUs(); cpus != "" {
		child = exec.Command("taskset", append([]string{"-c", cpus}, child.Args...)...)
	}
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d %s", streamClientsEnv, addr, file, first, kind))
	stdin, err := child.StdinPipe()
	require.NoError(b, err)
	out, err := child.StdoutPipe()
	require.NoError(b, err)
	child.Stderr = os.Stderr
	require.NoError(b, child.Start())
	b.Cleanup(func() { stdin.Close(); child.Wait() })
	return bufio.NewReader(out)
}

// streamChildren is the output of holdStreams's children.
type streamChildren []*bufio.Reader

// all reads each child's next "all" line and returns the latest time:
// when every stream had had one more event of holdStreams's kind.
func (cs streamChildren) all(b *testing.B) time.Time {
	var last time.Time
	for _, r := range cs {
		line, err := r.ReadString('\n')
		require.NoError(b, err)
		at, ok := strings.CutPrefix(strings.TrimSpace(line), "all ")
		require.True(b, ok, "the child says %q", line)
		ns, err := strconv.ParseInt(at, 10, 64)
		require.NoError(b, err)
		if t := time.Unix(0, ns); t.After(last) {
			last = t
		}
	}
	return last
}

// loopCPUs is where the benchmarks' loop runs, as make capacity pins the
// server: CPU 0 on a machine of two or more CPUs with taskset (which
// clientCPUs needs), otherwise anywhere (nil).
func loopCPUs() []int {
	if clientCPUs() == "" {
		return nil
	}
	return []int{0}
}

// clientCPUs is where the stream clients' process runs (a taskset -c
// list): the CPUs but the loop's, or "" (anywhere) on one CPU or without
// taskset.
func clientCPUs() string {
	if _, err := exec.LookPath("taskset"); err != nil || runtime.NumCPU() < 2 {
		return ""
	}
	return "1-" + strconv.Itoa(runtime.NumCPU()-1)
}

// loopTime is the longest of a kind of call on the loop, in wall time
// (wall) and in the loop thread's CPU time (cpu, not always the same
// call's), and for the call longest in wall time its CPU time and the
// time the thread waited on a run queue.
type loopTime struct{ wall, cpu, cpuOfLongest, waitOfLongest time.Duration }

// blocked is how long the longest call was neither running nor waiting
// for a core: blocked in a system call (the disk) or parked.
func (t loopTime) blocked() time.Duration { return max(0, t.wall-t.cpuOfLongest-t.waitOfLongest) }

func (t loopTime) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	return fmt.Sprintf("%v, %v (%v, %v)", r(t.wall), r(t.cpu), r(t.cpuOfLongest), r(t.waitOfLongest))
}

// runWait is how long the calling thread has waited on a run queue so
// far, from /proc/thread-self/schedstat (its second field, in ns; see
// the kernel's Documentation/scheduler/sched-stats.rst).
func runWait() time.Duration {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		panic(err)
	}
	f := strings.Fields(string(b))
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return time.Duration(n)
}

// threadCPU is the CPU time of the calling thread (the loop's: it is
// locked to its thread), clock_gettime(2) CLOCK_THREAD_CPUTIME_ID.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}

// benchTraceEnv names the environment variable that makes
// BenchmarkLiveStreams and BenchmarkLiveBroadcast keep a Go execution
// trace of their last seconds (runtime/trace's flight recorder) and write
// it to the folder it names each time the loop had a turn over 10 ms
// (Stats.SlowTurns): `go tool trace FILE` then shows the loop's goroutine
// around it, whether it was running, waiting for a P (runnable: after a
// yield or a preemption, the loop's locked thread waits for another
// thread to hand its P back) or in a system call, and what ran meanwhile.
const benchTraceEnv = "STATESECRETS_BENCH_TRACE"

// slowTurnTrace writes the flight recorder's trace when the loop had a
// slow turn; its zero value (no folder named) does nothing.
type slowTurnTrace struct {
	fr   *trace.FlightRecorder
	dir  string
	srv  *gameserver.Server
	slow uint64 // Stats.SlowTurns at the last check
	n    int    // traces written
}

// traceSlowTurns starts the flight recorder if benchTraceEnv names a
// folder.
func traceSlowTurns(b *testing.B, srv *gameserver.Server) *slowTurnTrace {
	dir := os.Getenv(benchTraceEnv)
	if dir == "" {
		return &slowTurnTrace{}
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: 3 * time.Second, MaxBytes: 128 << 20})
	require.NoError(b, fr.Start())
	b.Cleanup(fr.Stop)
	return &slowTurnTrace{fr: fr, dir: dir, srv: srv, slow: srv.Stats().SlowTurns}
}

// check writes the trace of the last seconds to the folder if the loop
// had a turn over 10 ms since the last check, and says so.
func (t *slowTurnTrace) check(b *testing.B) {
	if t.fr == nil {
		return
	}
	slow := t.srv.Stats().SlowTurns
	if slow == t.slow {
		return
	}
	t.n++
	name := fmt.Sprintf("%s/%s-%d.trace", t.dir, b.Name(), t.n)
	f, err := os.Create(name)
	require.NoError(b, err)
	defer f.Close()
	_, err = t.fr.WriteTo(f)
	require.NoError(b, err)
	b.Logf("%d turns over 10 ms: %s", slow-t.slow, name)
	t.slow = slow
}
