//go:build linux && !gameserver_portable

package gameserver_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/statesecrets/server/gameserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Requests that became ready one after another are served in that order
// however many turns they take, more of them than one epoll_wait returns
// (256) included: the events a turn past its budget leaves are served
// first by the next, not left to epoll, whose level-triggered ready list
// would put them behind the connections it has not reported yet. The
// kernel's list is in the order the connections became readable, which
// on loopback is the order the requests were sent. (The portable back
// end's readers report in the order the Go scheduler runs them.)
func TestTurnsOverBudgetServeInArrivalOrder(t *testing.T) {
	const n = 300
	var mu sync.Mutex
	var order []int
	addr, s := startServer(t, gameserver.Config{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, ok := requestIndex(r)
		if !ok {
			return // the warm-up
		}
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		time.Sleep(gameserver.TurnBudget / 20) // about 20 a turn
	})})
	cls, release := sendWhileHeld(t, s, addr, n)
	turns := s.Stats().LoopTurns
	release()
	for _, cl := range cls {
		resp, _ := cl.readResponse(http.MethodGet)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	mu.Lock() // the loop wrote order; a response read is no happens-before edge for the race detector
	got := slices.Clone(order)
	mu.Unlock()
	assert.Equal(t, want, got, "served in the order they became ready")
	assert.Greater(t, s.Stats().LoopTurns-turns, uint64(2), "the test needs the requests spread over turns")
}
