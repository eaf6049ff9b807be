package gameserver_test

import (
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadHeaderTimeoutFromAccept(t *testing.T) {
	t.Parallel()
	// Ensure a new connection that stays silent, then trickles its header
	// a byte at a time, is closed ReadHeaderTimeout after accept, not
	// after its first byte (net/http's behaviour). On Linux the kernel
	// holds a silent connection for about a second (TCP_DEFER_ACCEPT)
	// before the server accepts it, so the silence here is longer, and
	// the bound allows for that second.
	const timeout = time.Second
	addr, _ := startServer(t, gameserver.Config{Handler: textHandler("ok"), ReadHeaderTimeout: timeout, IdleTimeout: time.Minute})
	cl := dial(t, addr)
	start := time.Now()
	stop := make(chan struct{})
	go func() {
		select {
		case <-stop:
			return
		case <-time.After(timeout * 3 / 2): // silent past the kernel's hold
		}
		for i := 0; ; i++ {
			if _, err := cl.c.Write([]byte{"GET / HTTP/1.1\r\nHost: t\r\nX-Slow: abcdefghijklmnopq"[i%40]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	b, err := readToClose(cl.c, cl.c)
	took := time.Since(start)
	close(stop)
	require.NoError(t, err, "the server kept the trickling connection open")
	assert.Empty(t, string(b))
	assert.GreaterOrEqual(t, took, timeout-50*time.Millisecond)
	// From the first byte it would be closed at 5/2 of the timeout.
	assert.Less(t, took, timeout*23/10, "closed %v after connecting: counted from the first byte", took)
}

func TestReadHeaderTimeoutAfterIdleWait(t *testing.T) {
	t.Parallel()
	// Ensure the next request on a kept-alive connection is timed from
	// its first byte: a wait longer than ReadHeaderTimeout, then a
	// request sent in two parts inside it, is served.
	cl := answeredConn(t, 300*time.Millisecond, time.Minute)
	time.Sleep(500 * time.Millisecond)
	cl.writeAll("GET / HTTP/1.1\r\n")
	time.Sleep(100 * time.Millisecond)
	cl.writeAll("Host: test\r\n\r\n")
	assert.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
}

func TestShutdownServesRequestWaitingUnread(t *testing.T) {
	t.Parallel()
	// Ensure Shutdown does not reset an idle keep-alive connection whose
	// next request is already in its socket, unread: it is read, served
	// with "Connection: close", and the connection then closed cleanly;
	// the other one, whose response said keep-alive, closes once idle for
	// DrainIdleTimeout.
	// To have the request arrive in the turn in which the drain begins,
	// after that turn read its sockets, a handler on another connection
	// holds the turn while the request is sent and Shutdown is posted.
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", textHandler("ok"))
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "held")
	})
	addr, s := startServer(t, gameserver.Config{Handler: mux, DrainIdleTimeout: 100 * time.Millisecond})
	idle, holder := dial(t, addr), dial(t, addr)
	for _, cl := range []*client{idle, holder} {
		cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		require.Equal(t, okText("ok"), normalize(cl.readRaw(http.MethodGet)))
	}

	// While a posted function holds the loop, /hold is sent and Shutdown
	// posted: the next turn's wait returns both; /hold's handler holds
	// that turn while the idle connection's request arrives, then the
	// drain begins, in the same turn.
	inBlocker, blocked := make(chan struct{}), make(chan struct{})
	require.NoError(t, s.Post(func() { close(inBlocker); <-blocked }))
	waitClosed(t, inBlocker, "the posted function")
	holder.writeAll("GET /hold HTTP/1.1\r\nHost: test\r\n\r\n")
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(t.Context()) }()
	time.Sleep(100 * time.Millisecond) // Shutdown has posted the drain
	close(blocked)
	waitClosed(t, entered, "the /hold handler")
	idle.writeAll("GET /second HTTP/1.1\r\nHost: test\r\n\r\n")
	time.Sleep(100 * time.Millisecond) // the request is in the server's socket
	close(release)

	resp, body := idle.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	// (The portable back end's reader may hand the request over while
	// /hold runs, before the drain: then it is served as usual, and the
	// connection closes after it all the same.)
	_, err := idle.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "a clean close, not a reset")
	assert.False(t, errors.Is(err, syscall.ECONNRESET))
	_, body = holder.readResponse(http.MethodGet)
	assert.Equal(t, "held", body)
	_, err = holder.br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "closed after its response and DrainIdleTimeout")
	require.NoError(t, <-shut)
}

// rss returns the process's resident set size, from /proc/self/statm.
func rss(t testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	require.NoError(t, err)
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	return pages * int64(os.Getpagesize())
}

// heapInUse returns the heap's live spans after a collection, in bytes.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// heapHeld returns the heap memory the runtime holds from the OS (HeapSys
// - HeapReleased: live, garbage not yet collected, and free but not given
// back), in bytes.
func heapHeld() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapSys - ms.HeapReleased)
}

// pipelineNeverRead opens conns connections with a 4 KiB receive buffer,
// each pipelining reqs GETs of path, and never reads from them.
func pipelineNeverRead(t testing.TB, addr string, conns, reqs int, path string) []*client {
	req := strings.Repeat("GET "+path+" HTTP/1.1\r\nHost: t\r\n\r\n", reqs)
	cls := make([]*client, conns)
	for i := range cls {
		cls[i] = dialWindow(t, addr, 4<<10)
		go cls[i].c.Write([]byte(req)) // blocks once the server stops reading
	}
	return cls
}

// settled waits until s has conns connections open and has served no
// request for a second, and returns its Stats then.
func settled(t testing.TB, s *gameserver.Server, conns int) gameserver.Stats {
	t.Helper()
	var last gameserver.Stats
	var since time.Time
	require.Eventually(t, func() bool {
		st := s.Stats()
		if st.OpenConns != conns || st.Requests != last.Requests {
			last, since = st, time.Now()
			return false
		}
		return time.Since(since) >= time.Second
	}, 6*ioTimeout, 50*time.Millisecond, "the pipelines never settled")
	return last
}

// stylesheet is the size of the game's stylesheet, the file of the attack.
const stylesheet = 12_500

func TestNeverReadingPipelinesBounded(t *testing.T) {
	// Ensure connections that pipeline many requests and never read cost
	// the server a bounded amount of memory each (queued output plus the
	// input held behind it), and other clients are still served quickly.
	// The attack on main: 200 connections x 500 GETs of a 12.5 KB file
	// took the server from 21 MB to 492 MB; the bound is 64 MB over the
	// baseline.
	if testing.Short() {
		t.Skip("memory measurement: seconds")
	}
	const conns, reqs = 200, 500
	body := strings.Repeat("x", stylesheet)
	mux := http.NewServeMux()
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "static "+r.URL.Path) })
	addr, s := startServer(t, gameserver.Config{Handler: mux})
	debug.FreeOSMemory()
	base, baseHeap := rss(t), heapInUse()

	pipelineNeverRead(t, addr, conns, reqs, "/style.css")
	// Wait until the server has made no progress on them for a second.
	last := settled(t, s, conns)
	// Measured as the baseline was, after a collection that gives freed
	// memory back: what the server holds, not garbage the collector's
	// pacing lets the heap carry (up to its live size again, GOGC=100;
	// the portable back end allocates per write, so it carries more).
	debug.FreeOSMemory()
	heap := heapInUse() - baseHeap
	grown := rss(t) - base
	t.Logf("%d connections x %d requests: %d served, RSS +%.1f MB (%.0f KB per connection), heap in use +%.1f MB",
		conns, reqs, last.Requests, float64(grown)/1e6, float64(grown)/conns/1e3, float64(heap)/1e6)
	assert.Less(t, heap, int64(64<<20), "heap in use over the baseline")
	if !raceEnabled {
		assert.Less(t, grown, int64(64<<20), "RSS over the baseline")
	}

	// The probe's bound must hold in one of three tries of 2 s (the
	// machine is shared).
	var p99 time.Duration
	for range 3 {
		stop := make(chan struct{})
		lats := make(chan []time.Duration, 1)
		go func() { lats <- probe(t, addr, stop) }()
		time.Sleep(2 * time.Second)
		close(stop)
		lat := <-lats
		p99 = testkit.Quantile(lat, 0.99)
		t.Logf("probe meanwhile: %d requests, p50 %v, p99 %v", len(lat), testkit.Quantile(lat, 0.5), p99)
		if p99 < probeBound {
			break
		}
	}
	assert.Less(t, p99, probeBound)
}

func TestOutputBudget(t *testing.T) {
	// Ensure a server over MaxOutputBytes still serves a connection with
	// nothing pending, and that once the clients read, every pipelined
	// response arrives, whole and in order (connections held back by the
	// budget or their own bound resume). TestBackedUp checks the rule
	// itself.
	const budget, conns, reqs, size = 256 << 10, 8, 3, 4 << 20
	mux := http.NewServeMux()
	mux.HandleFunc("/n/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
		w.Write(pattern(n))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "static "+r.URL.Path) })
	addr, s := startServer(t, gameserver.Config{Handler: mux, MaxOutputBytes: budget})
	cls := pipelineNeverRead(t, addr, conns, reqs, "/n/"+strconv.Itoa(size))
	eventually(t, func() bool { return s.Stats().Requests == conns }, "the first responses were not served")
	time.Sleep(100 * time.Millisecond)
	st := s.Stats()
	assert.Equal(t, uint64(conns), st.Requests, "served on behind output nobody reads")
	assert.Greater(t, st.QueuedOutput, budget, "the test needs the server over its budget")

	resp, body := dial(t, addr).get("/fresh")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a connection with nothing pending is served")
	assert.Equal(t, "static /fresh", body)

	want := patternSum(size)
	var wg sync.WaitGroup
	for i, cl := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range reqs {
				resp, body := cl.readResponse(http.MethodGet)
				if !assert.Equal(t, http.StatusOK, resp.StatusCode, "conn %d response %d", i, j) ||
					!assert.Equal(t, want, sha256.Sum256([]byte(body)), "conn %d response %d", i, j) {
					return
				}
			}
		}()
	}
	wg.Wait()
	eventually(t, func() bool { return s.Stats().QueuedOutput == 0 }, "output still queued after the clients read it all")
}

func TestMemoryGivenBackAfterBurst(t *testing.T) {
	// Ensure the memory of a large output backlog goes back to the OS soon
	// after it drains, not after minutes of background scavenging.
	if testing.Short() {
		t.Skip("memory measurement: seconds")
	}
	// 192 MiB, of which the kernel takes about 2 MiB a connection into its
	// socket buffers: about 100 MiB stays queued, over releaseAt (64 MiB)
	// however many turns the loop takes to serve the requests.
	const conns, size = 48, 4 << 20
	big := pattern(size)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "static "+r.URL.Path) })
	addr, s := startServer(t, gameserver.Config{Handler: mux})
	debug.FreeOSMemory()
	base, baseHeld := rss(t), heapHeld()
	cls := pipelineNeverRead(t, addr, conns, 1, "/big")
	eventually(t, func() bool { st := s.Stats(); return st.Requests == conns && st.QueuedOutput >= 80<<20 }, "the backlog never built")
	peak, peakHeld := rss(t)-base, heapHeld()-baseHeld
	for _, cl := range cls {
		cl.c.Close()
	}
	eventually(t, func() bool { return s.Stats().QueuedOutput == 0 }, "the backlog never drained")
	start := time.Now()
	// The queues' buffers are garbage now; the server's release collects
	// them and returns the memory, well before the scavenger would.
	var held, after int64
	eventually(t, func() bool {
		held, after = heapHeld()-baseHeld, rss(t)-base
		// (Under the race detector its shadow memory stays resident.)
		return held < peakHeld/4 && (raceEnabled || after < peak/4)
	}, "the backlog's memory was not given back")
	took := time.Since(start)
	t.Logf("backlog %d MiB: RSS +%.0f MB (heap +%.0f MB) at the peak, +%.0f MB (heap +%.0f MB) %v after it drained",
		conns*size>>20, float64(peak)/1e6, float64(peakHeld)/1e6, float64(after)/1e6, float64(held)/1e6, took.Round(time.Millisecond))
	assert.Less(t, took, 5*time.Second, "given back at once, not by the background scavenger")
}
