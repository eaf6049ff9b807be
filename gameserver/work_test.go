package gameserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// digest is the answer of the slow handlers here: a function of the
// request's id, computed by the work, so a response proves which work ran.
func digest(id string) string {
	sum := sha256.Sum256([]byte("work " + id))
	return hex.EncodeToString(sum[:8])
}

// workMux serves /slow?id=N through Go (spin cost of CPU on a worker, then
// digest(N) written by finish on the loop), and anything else inline, as
// "static <path>".
func workMux(cost time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		gameserver.Go(w, r, func(ctx context.Context) string {
			spin(cost)
			return digest(id)
		}, func(w http.ResponseWriter, r *http.Request, v string) {
			io.WriteString(w, v)
		})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "static "+r.URL.Path) })
	return mux
}

// probe makes GET requests on its own connection until stop is closed and
// returns each request's latency.
func probe(t testing.TB, addr string, stop <-chan struct{}) []time.Duration {
	cl := dial(t, addr)
	var lat []time.Duration
	for {
		select {
		case <-stop:
			return lat
		case <-time.After(5 * time.Millisecond):
		}
		start := time.Now()
		resp, body := cl.get("/probe")
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusOK || body != "static /probe" {
			t.Errorf("probe: %d %q", resp.StatusCode, body)
			return lat
		}
	}
}

// runSlowClients has n clients, each on its own connection, pipeline
// GET /slow?id=i and GET /after?id=i, and checks both responses, in
// order. It returns when all are answered.
func runSlowClients(t testing.TB, addr string, n int) {
	var wg sync.WaitGroup
	for i := range n {
		cl := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := strconv.Itoa(i)
			cl.writeAll("GET /slow?id=" + id + " HTTP/1.1\r\nHost: t\r\n\r\nGET /after/" + id + " HTTP/1.1\r\nHost: t\r\n\r\n")
			resp, body := cl.readResponse(http.MethodGet)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "client %d", i)
			assert.Equal(t, digest(id), body, "client %d: the slow response first", i)
			resp, body = cl.readResponse(http.MethodGet)
			assert.Equal(t, http.StatusOK, resp.StatusCode, "client %d", i)
			assert.Equal(t, "static /after/"+id, body, "client %d: then the pipelined one", i)
		}()
	}
	wg.Wait()
}

// probeWhileWorking serves workMux(100 ms) and runs 50 slow clients
// (runSlowClients) with a probe meanwhile; it returns the probe's
// latencies and the server.
func probeWhileWorking(t testing.TB) ([]time.Duration, *gameserver.Server) {
	addr, s := startServer(t, gameserver.Config{Handler: workMux(100 * time.Millisecond)})
	stop := make(chan struct{})
	lats := make(chan []time.Duration, 1)
	go func() { lats <- probe(t, addr, stop) }()
	runSlowClients(t, addr, 50)
	close(stop)
	return <-lats, s
}

func TestGoKeepsLoopResponsive(t *testing.T) {
	// Ensure 50 clients each asking for 100 ms of CPU work through the
	// pool get their own answers, in order with the requests they
	// pipelined behind, while a static request on another connection is
	// answered quickly throughout: p99 under probeBound, generous for a
	// busy CI machine running other packages' tests beside this one (with
	// the work on the loop a turn would hold it for up to 50 x 100 ms);
	// BenchmarkGoProbe has the tight figure, the 20 ms.
	//
	// The machine is shared and its scheduling noisy: the latency bound
	// must hold in one of three runs; everything else in each.
	var best time.Duration
	for run := range 3 {
		lat, s := probeWhileWorking(t)
		require.NotEmpty(t, lat)
		p99 := testkit.Quantile(lat, 0.99)
		t.Logf("run %d: probe %d requests, p50 %v, p99 %v, max %v", run, len(lat), testkit.Quantile(lat, 0.5), p99, lat[len(lat)-1])
		// A worker counts its task after handing the result to the loop.
		eventually(t, func() bool { return s.Stats().Work.Finished == 50 }, "the pool did not count 50 tasks")
		st := s.Stats().Work
		assert.GreaterOrEqual(t, st.WorkTime, 50*100*time.Millisecond)
		assert.LessOrEqual(t, st.Workers, max(runtime.GOMAXPROCS(0)-1, 1))
		assert.Zero(t, st.Refused)
		best = p99
		if best < probeBound {
			break
		}
	}
	assert.Less(t, best, probeBound, "static probe p99 while the pool works, best of three runs")
}

func TestGoQueueFull(t *testing.T) {
	// Ensure work over WorkQueue is answered 503 with Retry-After at once,
	// without running, and counted; the queued work still runs.
	release := make(chan struct{})
	var ran atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		gameserver.Go(w, r, func(ctx context.Context) int {
			<-release
			return int(ran.Add(1))
		}, func(w http.ResponseWriter, r *http.Request, n int) { fmt.Fprint(w, "done") })
	})
	addr, s := startServer(t, gameserver.Config{Handler: mux, Workers: 1, WorkQueue: 1})
	running, queued := dial(t, addr), dial(t, addr)
	running.writeAll("GET /1 HTTP/1.1\r\nHost: t\r\n\r\n")
	eventually(t, func() bool { return s.Stats().Work.Running == 1 }, "the first work never ran")
	queued.writeAll("GET /2 HTTP/1.1\r\nHost: t\r\n\r\n")
	eventually(t, func() bool { return s.Stats().Work.Queued == 1 }, "the second work was not queued")

	over := dial(t, addr)
	start := time.Now()
	resp, body := over.get("/3")
	assert.Less(t, time.Since(start), ioTimeout/2, "answered at once")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, body, "Service Unavailable")
	assert.Equal(t, uint64(1), s.Stats().Work.Refused)

	close(release)
	for _, cl := range []*client{running, queued} {
		resp, body := cl.readResponse(http.MethodGet)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "done", body)
	}
	assert.Equal(t, int32(2), ran.Load(), "the refused work never ran")
}

func TestGoClientGone(t *testing.T) {
	// Ensure work whose client closed its connection before a worker took
	// it is not started, and counted as skipped.
	release := make(chan struct{})
	var started sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		gameserver.Go(w, r, func(ctx context.Context) string {
			started.Store(r.URL.Path, true)
			if r.URL.Path == "/block" {
				<-release
			}
			return r.URL.Path
		}, func(w http.ResponseWriter, r *http.Request, v string) { io.WriteString(w, v) })
	})
	addr, s := startServer(t, gameserver.Config{Handler: mux, Workers: 1})
	blocker := dial(t, addr)
	blocker.writeAll("GET /block HTTP/1.1\r\nHost: t\r\n\r\n")
	eventually(t, func() bool { return s.Stats().Work.Running == 1 }, "the blocking work never ran")
	gone := dial(t, addr)
	gone.writeAll("GET /gone HTTP/1.1\r\nHost: t\r\n\r\n")
	eventually(t, func() bool { return s.Stats().Work.Queued == 1 }, "the work was not queued")
	gone.c.Close()
	eventually(t, func() bool { return s.Stats().Deferred == 1 }, "the gone client's response was not dropped")
	close(release)
	resp, body := blocker.readResponse(http.MethodGet)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/block", body)
	eventually(t, func() bool { return s.Stats().Work.Skipped == 1 }, "the gone client's work was not skipped")
	_, ran := started.Load("/gone")
	assert.False(t, ran, "work for a client that went away was started")
}

func TestGoPanicInWork(t *testing.T) {
	// Ensure a panic in work is answered 500 and the server goes on.
	var logs testkit.LogBuffer
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		gameserver.Go(w, r, func(ctx context.Context) int { panic("work failed") },
			func(w http.ResponseWriter, r *http.Request, v int) { t.Error("finish ran after a panic") })
	})
	mux.Handle("/", textHandler("ok"))
	addr, _ := startServer(t, gameserver.Config{Handler: mux, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	cl := dial(t, addr)
	resp, _ := cl.get("/panic")
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	resp, body := cl.get("/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	assert.Contains(t, logs.String(), "work failed")
}

func TestGoSlowFinishLogged(t *testing.T) {
	// Ensure a finish function that holds the loop is in the slow log.
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		gameserver.Go(w, r, func(ctx context.Context) int { return 1 },
			func(w http.ResponseWriter, r *http.Request, v int) { spin(60 * time.Millisecond) })
	})
	addr, s := startServer(t, gameserver.Config{Handler: mux})
	resp, _ := dial(t, addr).get("/finish")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	slow := s.SlowRequests()
	require.Len(t, slow, 1)
	assert.Equal(t, "finish", slow[0].Phase)
	assert.Equal(t, "/finish", slow[0].Path)
	assert.GreaterOrEqual(t, slow[0].Duration, 60*time.Millisecond)
}

func TestGoUnderHTTPTest(t *testing.T) {
	// Ensure the same handler works under net/http's httptest: work and
	// finish run inline.
	h := workMux(time.Millisecond)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/slow?id=7", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, digest("7"), rec.Body.String())

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/slow?id=8")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, digest("8"), strings.TrimSpace(string(body)))
}

func TestGoShutdownWaits(t *testing.T) {
	// Ensure Shutdown waits for the responses of running and queued work,
	// and each connection closes after its response.
	addr, s := startServer(t, gameserver.Config{Handler: workMux(100 * time.Millisecond), Workers: 1})
	a, b := dial(t, addr), dial(t, addr)
	a.writeAll("GET /slow?id=a HTTP/1.1\r\nHost: t\r\n\r\n")
	b.writeAll("GET /slow?id=b HTTP/1.1\r\nHost: t\r\n\r\n")
	eventually(t, func() bool { w := s.Stats().Work; return w.Running == 1 && w.Queued == 1 }, "the work was not running and queued")
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(t.Context()) }()
	for id, cl := range map[string]*client{"a": a, "b": b} {
		resp, body := cl.readResponse(http.MethodGet)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, digest(id), body)
		assert.True(t, resp.Close, "a response finished while draining closes its connection")
	}
	require.NoError(t, <-shut)
}
