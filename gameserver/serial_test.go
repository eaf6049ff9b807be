package gameserver_test

import (
	"bufio"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
)

// overlap records how many of the sections it guards run at once: enter
// at the start of a section meant to run under the Serial lock, and call
// what it returns at the end.
type overlap struct {
	now, most atomic.Int32
	log       []string // appended to only inside sections: a race if two overlap
}

func (o *overlap) enter(what string) (leave func()) {
	n := o.now.Add(1)
	for m := o.most.Load(); n > m && !o.most.CompareAndSwap(m, n); m = o.most.Load() {
	}
	o.log = append(o.log, what)
	return func() { o.now.Add(-1) }
}

// serveSerial serves h through Serial on a net/http test server, its
// error log discarded (the panics some tests provoke), and returns both.
func serveSerial(t *testing.T, h http.Handler) (*httptest.Server, *gameserver.SerialHandler) {
	t.Helper()
	s := gameserver.Serial(h)
	srv := httptest.NewUnstartedServer(s)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, s
}

// fetch GETs url and returns the status and body, failing the test on a
// transport error.
func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: ioTimeout}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestSerialHandlersOneAtATime(t *testing.T) {
	t.Parallel()
	// Ensure concurrent requests through Serial never run their handlers
	// at the same time, while net/http serves each on its own goroutine.
	var o overlap
	served := 0 // touched by handlers only, without a lock
	srv, _ := serveSerial(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer o.enter("handler")()
		served++
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	const clients = 16
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			code, body := fetch(t, srv.URL)
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, "ok", body)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, o.most.Load(), "handlers overlapped")
	assert.Equal(t, clients, served)
}

func TestSerialGoWorkUnlockedFinishLocked(t *testing.T) {
	t.Parallel()
	// Ensure Go's work runs with the lock released (another request is
	// served while it waits) and its finish with the lock held (a request
	// sent while finish runs waits until it returns).
	var o overlap
	handled, otherServed, finishing := make(chan struct{}), make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		o.enter("handler")() // not around Go: under net/http it returns after finish
		close(handled)
		gameserver.Go(w, r, func(ctx context.Context) string {
			select {
			case <-otherServed:
				return "work ran unlocked"
			case <-time.After(ioTimeout):
				return "work held the lock"
			}
		}, func(w http.ResponseWriter, r *http.Request, v string) {
			defer o.enter("finish start")()
			close(finishing)
			time.Sleep(50 * time.Millisecond) // time for /other to try
			o.log = append(o.log, "finish end")
			io.WriteString(w, v)
		})
	})
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		defer o.enter("other")()
		io.WriteString(w, "other")
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		gameserver.Go(w, r, func(context.Context) int { panic("work failed") },
			func(http.ResponseWriter, *http.Request, int) {})
	})
	srv, s := serveSerial(t, mux)

	got := make(chan string, 1)
	go func() { _, body := fetch(t, srv.URL+"/work"); got <- body }()
	waitClosed(t, handled, "/work's handler")
	code, _ := fetch(t, srv.URL+"/other")
	assert.Equal(t, http.StatusOK, code)
	close(otherServed)
	waitClosed(t, finishing, "finish")
	code, _ = fetch(t, srv.URL+"/other")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "work ran unlocked", <-got)
	assert.EqualValues(t, 1, o.most.Load(), "a locked section overlapped another")
	s.Do(func() {
		assert.Equal(t, []string{"handler", "other", "finish start", "finish end", "other"}, o.log)
	})

	// A panic in work takes the lock back: the server goes on serving.
	c := &http.Client{Timeout: ioTimeout}
	_, err := c.Get(srv.URL + "/panic")
	require.Error(t, err, "net/http closes the connection of a handler that panicked")
	code, _ = fetch(t, srv.URL+"/other")
	assert.Equal(t, http.StatusOK, code)
}

// streamMux serves /events as an event stream that sends "data: hello"
// and is kept in *open (under the lock), and /ping inline.
func streamMux(open *[]*gameserver.EventStream) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		err := gameserver.Stream(w, r, func(s *gameserver.EventStream) {
			s.WriteString("data: hello\n\n")
			*open = append(*open, s)
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") })
	return mux
}

// openEvents opens url's event stream and returns its body's lines.
func openEvents(t *testing.T, url string) (*bufio.Reader, io.Closer) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	t.Cleanup(func() { resp.Body.Close() })
	return bufio.NewReader(resp.Body), resp.Body
}

// readEvent reads one event's "data: ..." line and its blank line, or
// returns the read's error.
func readEvent(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if _, err := r.ReadString('\n'); err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func TestSerialStream(t *testing.T) {
	t.Parallel()
	// Ensure a stream served through Serial holds no lock while it is
	// open: other requests are served, and events queued under the lock
	// (Do, as a timer would) reach the client; Close ends it, and a stream
	// opened after Close gets what open sent, then its end.
	var open []*gameserver.EventStream // touched under the lock only
	srv, s := serveSerial(t, streamMux(&open))
	events, _ := openEvents(t, srv.URL+"/events")
	ev, err := readEvent(events)
	require.NoError(t, err)
	assert.Equal(t, "data: hello", ev)

	code, body := fetch(t, srv.URL+"/ping")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "pong", body)

	s.Do(func() {
		require.Len(t, open, 1)
		_, err := open[0].WriteString("data: news\n\n")
		assert.NoError(t, err)
	})
	ev, err = readEvent(events)
	require.NoError(t, err)
	assert.Equal(t, "data: news", ev)

	s.Close()
	_, err = readEvent(events)
	assert.ErrorIs(t, err, io.EOF, "Close ends the stream with its last chunk")
	s.Do(func() { assert.True(t, open[0].Closed()) })

	late, _ := openEvents(t, srv.URL+"/events")
	ev, err = readEvent(late)
	require.NoError(t, err)
	assert.Equal(t, "data: hello", ev)
	_, err = readEvent(late)
	assert.ErrorIs(t, err, io.EOF, "a stream opened after Close ends once open returns")
	code, _ = fetch(t, srv.URL+"/ping")
	assert.Equal(t, http.StatusOK, code, "requests are still served after Close")
}

func TestSerialTimers(t *testing.T) {
	t.Parallel()
	// Ensure AfterFunc and Every run under the lock, one at a time with
	// handlers that are being hammered meanwhile, and that Stop and Close
	// stop them.
	var o overlap
	ticks, afters := 0, 0 // touched under the lock only
	srv, s := serveSerial(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer o.enter("handler")()
		time.Sleep(time.Millisecond)
	}))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					fetch(t, srv.URL)
				}
			}
		})
	}
	every := s.Every(5*time.Millisecond, func() {
		defer o.enter("tick")()
		ticks++
	})
	after := s.AfterFunc(10*time.Millisecond, func() {
		defer o.enter("after")()
		afters++
	})
	never := s.AfterFunc(time.Hour, func() { afters += 100 })
	count := func(n *int) (v int) { s.Do(func() { v = *n }); return v }
	eventually(t, func() bool { return count(&ticks) >= 5 && count(&afters) == 1 }, "timers did not fire")
	close(stop)
	wg.Wait()
	assert.EqualValues(t, 1, o.most.Load(), "a timer ran beside a handler")

	assert.False(t, after.Stop(), "AfterFunc had fired")
	assert.True(t, never.Stop())
	assert.False(t, never.Stop(), "already stopped")
	assert.True(t, every.Stop())
	n := count(&ticks)
	time.Sleep(30 * time.Millisecond)
	assert.Equal(t, n, count(&ticks), "Every ran after Stop")
	assert.Equal(t, 1, count(&afters))

	closed := 0
	s.Every(5*time.Millisecond, func() { closed++ })
	s.Close()
	time.Sleep(30 * time.Millisecond)
	assert.Zero(t, count(&closed), "a timer fired after Close")
}

func TestSerialWorkers(t *testing.T) {
	t.Parallel()
	// Ensure Go's work through Serial runs on at most GOMAXPROCS-1 workers
	// (at least 1) at once, as on the loop's pool, and that work whose
	// client went away while it waited for a worker never runs, nor its
	// finish.
	workers := max(runtime.GOMAXPROCS(0)-1, 1)
	var running, most atomic.Int32
	release := make(chan struct{})
	var ran sync.Map // id -> "work" or "finish"
	mux := http.NewServeMux()
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		gameserver.Go(w, r, func(ctx context.Context) string {
			n := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			ran.Store(id, "work")
			<-release
			return id
		}, func(w http.ResponseWriter, r *http.Request, v string) {
			ran.Store(id, "finish")
			io.WriteString(w, v)
		})
	})
	srv, _ := serveSerial(t, mux)

	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			_, body := fetch(t, srv.URL+"/work?id="+strconv.Itoa(i))
			assert.Equal(t, strconv.Itoa(i), body)
		})
	}
	eventually(t, func() bool { return running.Load() == int32(workers) }, "the workers never all started")
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/work?id=gone", nil)
	require.NoError(t, err)
	gone := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	time.Sleep(50 * time.Millisecond) // "gone" waits for a worker
	cancel()
	assert.Error(t, <-gone)
	for i := range 2 { // more work than workers: it waits its turn
		wg.Go(func() {
			id := strconv.Itoa(workers + i)
			_, body := fetch(t, srv.URL+"/work?id="+id)
			assert.Equal(t, id, body)
		})
	}
	time.Sleep(50 * time.Millisecond)
	assert.EqualValues(t, workers, running.Load(), "work beyond the workers started")
	close(release)
	wg.Wait()
	assert.EqualValues(t, workers, most.Load())
	_, started := ran.Load("gone")
	assert.False(t, started, "work whose client went away while it waited ran")
	for i := range workers + 2 {
		v, _ := ran.Load(strconv.Itoa(i))
		assert.Equal(t, "finish", v, "request %d", i)
	}
}
