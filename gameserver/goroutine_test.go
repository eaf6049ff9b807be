//go:build linux && !gameserver_portable

// The epoll back end only: the portable one reads and writes on helper
// goroutines by design.

package gameserver_test

import (
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// goroutineID parses the calling goroutine's id from the first line of its
// stack ("goroutine 42 [running]:"), for tests only.
func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	fields := strings.Fields(string(buf[:n]))
	id, _ := strconv.ParseUint(fields[1], 10, 64)
	return id
}

// runsOn is where a function ran: goroutine and OS thread.
type runsOn struct {
	goroutine uint64
	thread    int
}

// where records the goroutine and thread of every call to record.
type where struct {
	mu   sync.Mutex
	seen map[runsOn]int
}

func (w *where) record() {
	here := runsOn{goroutineID(), unix.Gettid()}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[runsOn]int{}
	}
	w.seen[here]++
}

func (w *where) snapshot() map[runsOn]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[runsOn]int, len(w.seen))
	for k, v := range w.seen {
		out[k] = v
	}
	return out
}

func TestSingleGoroutine(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	// Ensure 500 open keep-alive connections cost no more goroutines than
	// 5, and every handler call, posted function and timer runs on one
	// goroutine locked to one OS thread. The client connections are made
	// from the test goroutine, so they add no goroutines either.
	var w where
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.record()
		io.WriteString(rw, "ok")
	})})
	var conns []*client
	openConns := func(n int) {
		for len(conns) < n {
			cl := dial(t, addr)
			cl.writeAll("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
			resp, body := cl.readResponse(http.MethodGet)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "ok", body)
			conns = append(conns, cl)
		}
	}
	openConns(5)
	few := runtime.NumGoroutine()
	openConns(500)
	// Stats are published at the end of each loop turn.
	eventually(t, func() bool { return s.Stats().OpenConns == 500 }, "OpenConns, want 500")
	// Allow transient goroutines (the runtime's, other tests' leftovers)
	// to finish: a goroutine per connection would not.
	many := runtime.NumGoroutine()
	for deadline := time.Now().Add(ioTimeout); many > few+3 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		many = runtime.NumGoroutine()
	}
	assert.LessOrEqual(t, many, few+3, "goroutines: %d with 5 connections, %d with 500", few, many)

	posted := make(chan struct{})
	require.NoError(t, s.Post(func() { w.record(); close(posted) }))
	waitClosed(t, posted, "posted function")
	fired := make(chan struct{})
	s.AfterFunc(time.Millisecond, func() { w.record(); close(fired) })
	waitClosed(t, fired, "AfterFunc")
	ticked := make(chan struct{})
	require.NoError(t, s.Post(func() { // every and ticks live on the loop
		ticks := 0
		var every *gameserver.Timer
		every = s.Every(time.Millisecond, func() {
			w.record()
			if ticks++; ticks == 3 {
				every.Stop()
				close(ticked)
			}
		})
	}))
	waitClosed(t, ticked, "Every")

	seen := w.snapshot()
	require.Len(t, seen, 1, "handlers, posted functions and timers ran on several goroutines or threads: %v", seen)
	for on, calls := range seen {
		assert.Equal(t, 500+1+1+3, calls)
		assert.NotEqual(t, goroutineID(), on.goroutine, "ran on the test goroutine")
	}
}
