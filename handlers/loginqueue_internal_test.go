package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wait puts a job of each key in q's waiting jobs, as enter does when the
// pool is busy, and returns the jobs the bound displaced.
func (q *hashQueue) wait(keys ...string) (displaced []string) {
	return q.waitForm("", keys...)
}

// waitForm is wait with each request carrying the form token form (none
// for "").
func (q *hashQueue) waitForm(form string, keys ...string) (displaced []string) {
	for _, k := range keys {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		if form != "" {
			r.AddCookie(&http.Cookie{Name: formCookie, Value: form})
		}
		j := q.arrive(k, r)
		if d := q.admit(j); d != nil {
			displaced = append(displaced, fmt.Sprintf("%s@%d", d.key, d.arrived))
		}
	}
	return displaced
}

// take starts n waiting jobs, as dispatch does, and returns their keys.
func (q *hashQueue) take(n int) string {
	var keys []string
	for range n {
		j := q.next()
		if j == nil {
			break
		}
		q.begin(j) // a recorder's request never ends: running stays put
		keys = append(keys, j.key)
	}
	return strings.Join(keys, " ")
}

func TestHashQueue_Order(t *testing.T) {
	t.Run("RoundRobin", func(t *testing.T) {
		// Ensure waiting jobs start one per address in turn, the address
		// whose last turn is oldest first, each address's jobs in order.
		q := newHashQueue()
		q.wait("a", "a", "a", "b", "b", "b", "c")
		assert.Equal(t, "a b c a b a b", q.take(10))
	})

	t.Run("NewcomerFirst", func(t *testing.T) {
		// Ensure an address that has not tried before goes before
		// addresses that had turns, and before an address with no turn
		// yet that tried before (a storm's address coming back).
		q := newHashQueue()
		q.wait("a", "b", "a", "b")
		assert.Equal(t, "a b", q.take(2))
		q.arrive("c", httptest.NewRequest(http.MethodPost, "/login", nil)) // refused, say
		q.wait("c", "user")
		assert.Equal(t, "user c a b", q.take(10))
	})

	t.Run("Bound", func(t *testing.T) {
		// Ensure at most MaxHashQueue wait: over it, the newest job of the
		// last-ranked address is displaced (the newcomer's own, if it
		// ranks last), so an address that had a turn makes room for one
		// that had none.
		q := newHashQueue()
		for i := range MaxHashQueue {
			q.wait(fmt.Sprintf("storm%d", i)) // arriving at clock 1 to 16
		}
		assert.Equal(t, "storm0 storm1", q.take(2)) // turns at 17, 18
		assert.Empty(t, q.wait("storm0", "storm1")) // arriving at 19, 20: full
		assert.Equal(t, []string{"storm1@20"}, q.wait("user"), "the address with the latest turn makes room")
		assert.Equal(t, []string{"storm0@19"}, q.wait("storm2"), "storm2 had no turn yet")
		assert.Equal(t, []string{"storm0@23"}, q.wait("storm0"), "the newcomer ranks last")
		assert.Len(t, q.waiting, MaxHashQueue)
		assert.Equal(t, "storm2 storm3", q.take(2), "first attempts that came before the user go first")
	})

	t.Run("ReplayedForm", func(t *testing.T) {
		// Ensure a storm that sends one form token from fresh addresses
		// ranks, from its second request on, as a client coming back: in
		// its first round, a player with a form of their own who comes to
		// a full queue is not the one displaced, and goes next.
		q := newHashQueue()
		const stormForm, userForm = "5707a5707a5707a5707a5707a5707a57", "0be1a0be1a0be1a0be1a0be1a0be1a0b"
		for i := range MaxHashQueue {
			assert.Empty(t, q.waitForm(stormForm, fmt.Sprintf("storm%d", i)))
		}
		assert.Equal(t, []string{"storm15@16"}, q.waitForm(userForm, "user"), "the storm's latest form makes room")
		assert.Equal(t, []string{"storm16@18"}, q.waitForm(stormForm, "storm16"), "a fresh address with the storm's form ranks last")
		assert.Equal(t, "storm0 user storm1", q.take(3), "the storm's first request, then the player's")
	})
}

func TestHashQueue_Enter(t *testing.T) {
	t.Run("PerAddress", func(t *testing.T) {
		// Ensure an address with AuthBurst jobs waiting is refused 429 with
		// Retry-After, its start never called, while another address's
		// job starts.
		q := newHashQueue()
		q.running = q.slots // the pool is busy
		for range AuthBurst {
			q.wait("a")
		}
		var started []string
		var refused error
		enter := func(key string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			q.enter(rec, httptest.NewRequest(http.MethodPost, "/login", nil), key,
				func(http.ResponseWriter, *http.Request) { started = append(started, key) },
				func(_ http.ResponseWriter, _ *http.Request, err error) { refused = err })
			return rec
		}
		rec := enter("a")
		require.Error(t, refused)
		assert.Equal(t, http.StatusTooManyRequests, statusCode(refused))
		assert.Contains(t, userMessage(refused), "Your address has 5 logins or registrations waiting")
		assert.NotEmpty(t, rec.Header().Get("Retry-After"))
		assert.Empty(t, started)
		enter("b") // under a recorder no response can wait: it starts at once
		assert.Equal(t, []string{"b"}, started)
	})

	t.Run("Ends", func(t *testing.T) {
		// Ensure a turn lasts until its request's context ends, and then
		// the pool has room again.
		q := newHashQueue()
		q.slots = 1
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest(http.MethodPost, "/login", nil).WithContext(ctx)
		started := 0
		start := func(http.ResponseWriter, *http.Request) { started++ }
		q.enter(httptest.NewRecorder(), r, "a", start, nil)
		assert.Equal(t, 1, started)
		q.mu.Lock()
		assert.Equal(t, 1, q.running)
		q.mu.Unlock()
		cancel()
		assert.Eventually(t, func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.running == 0
		}, time.Second, time.Millisecond)
	})
}
