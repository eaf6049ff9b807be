package gameserver_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderLog records the order in which the handler was called.
type orderLog struct {
	mu    sync.Mutex
	paths []string
}

func (o *orderLog) add(p string) {
	o.mu.Lock()
	o.paths = append(o.paths, p)
	o.mu.Unlock()
}

func (o *orderLog) index(p string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, q := range o.paths {
		if q == p {
			return i
		}
	}
	return -1
}

// A client that pipelines a batch of requests gets them served one per loop
// turn, round-robin with the others: a request another client sends while
// the batch is being served is answered before the batch's last request.
//
// The batch's requests are slow, as a login's password hash is: each sleeps
// a little on the loop. The order asserted does not depend on it with
// epoll (B's bytes are in the kernel before A's second request runs), but
// the portable back end learns of them from B's reader goroutine, which
// the sleeps give ample time (n*slow) to run.
func TestPipelinedBatchDoesNotStallOthers(t *testing.T) {
	const n, slow = 20, 5 * time.Millisecond
	var log orderLog
	firstIn := make(chan struct{})
	bSent := make(chan struct{})
	addr, _ := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		if r.URL.Path == "/a/0" {
			// Hold the loop on A's first request until B's request is
			// in B's socket, so B is ready on the very next turn.
			close(firstIn)
			select {
			case <-bSent:
			case <-time.After(ioTimeout):
			}
		} else if strings.HasPrefix(r.URL.Path, "/a/") {
			time.Sleep(slow)
		}
		fmt.Fprint(w, r.URL.Path)
	})})
	b := dial(t, addr)
	resp, body := b.get("/b/warm") // B is accepted and idle before A starts
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "/b/warm", body)

	a := dial(t, addr)
	var batch strings.Builder
	for i := range n {
		fmt.Fprintf(&batch, "GET /a/%d HTTP/1.1\r\nHost: t\r\n\r\n", i)
	}
	a.writeAll(batch.String())
	waitClosed(t, firstIn, "A's first request to reach the handler")
	b.writeAll("GET /b/1 HTTP/1.1\r\nHost: t\r\n\r\n")
	close(bSent)

	resp, body = b.readResponse(http.MethodGet)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/b/1", body)
	for i := range n {
		resp, body := a.readResponse(http.MethodGet)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, fmt.Sprintf("/a/%d", i), body, "A's responses in order")
	}
	bi, last := log.index("/b/1"), log.index(fmt.Sprintf("/a/%d", n-1))
	require.GreaterOrEqual(t, bi, 0)
	require.GreaterOrEqual(t, last, 0)
	assert.Less(t, bi, last, "B's request waited for A's whole batch: %v", log.paths)
	for i := 1; i < n; i++ {
		assert.Less(t, log.index(fmt.Sprintf("/a/%d", i-1)), log.index(fmt.Sprintf("/a/%d", i)), "A's handler calls in order")
	}
}

// sendWhileHeld dials n connections to addr and has each served once (an
// open connection in the epoll set, idle), then holds s's loop in a
// posted function while connection i sends GET /r/i, one after another,
// so that all n are ready when its next turn begins; release lets the
// loop go on.
func sendWhileHeld(t *testing.T, s *gameserver.Server, addr string, n int) (cls []*client, release func()) {
	t.Helper()
	cls = make([]*client, n)
	for i := range cls {
		cls[i] = dial(t, addr)
		cls[i].get("/warm")
	}
	held, gate := make(chan struct{}), make(chan struct{})
	require.NoError(t, s.Post(func() {
		close(held)
		<-gate
	}))
	waitClosed(t, held, "the posted function holding the loop")
	for i, cl := range cls {
		cl.writeAll(fmt.Sprintf("GET /r/%d HTTP/1.1\r\nHost: t\r\n\r\n", i))
	}
	return cls, func() { close(gate) }
}

// requestIndex is i of a request for /r/i, false for another path.
func requestIndex(r *http.Request) (int, bool) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
	return i, err == nil
}

// A turn that finds more requests ready than it can serve in its budget
// writes the responses of those it served before a later turn serves the
// rest: the handler of the last request served finds the first one's
// response at its client already. Each handler sleeps half the budget,
// so a turn serves two or three of them; before the budget, one turn
// served all twelve and wrote every response at its end.
func TestTurnOverBudgetWritesBeforeServingTheRest(t *testing.T) {
	const n = 12
	var mu sync.Mutex
	var order []int
	received := make([]chan struct{}, n) // closed once client i has its response
	for i := range received {
		received[i] = make(chan struct{})
	}
	var sawFirst atomic.Bool
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := requestIndex(r)
		if !ok {
			return // the warm-up
		}
		mu.Lock()
		order = append(order, i)
		last, first := len(order) == n, order[0]
		mu.Unlock()
		time.Sleep(gameserver.TurnBudget / 2)
		if last {
			select {
			case <-received[first]:
				sawFirst.Store(true)
			case <-time.After(ioTimeout / 2): // within the clients' read deadline
			}
		}
		fmt.Fprint(w, r.URL.Path)
	})})
	cls, release := sendWhileHeld(t, s, addr, n)
	var wg sync.WaitGroup
	for i, cl := range cls {
		wg.Go(func() {
			resp, body := cl.readResponse(http.MethodGet)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, fmt.Sprintf("/r/%d", i), body)
			close(received[i])
		})
	}
	release()
	wg.Wait()
	assert.True(t, sawFirst.Load(), "the first response was still unwritten when the last request was served (order %v)", order)
}
