package handlers_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// addr is the n-th address of a test network, as a RemoteAddr: each has
// a per-address limit of its own.
func addr(n int) string { return fmt.Sprintf("198.51.%d.%d:40000", n/250, 1+n%250) }

// requireThrottled asserts resp is the login form refused by the
// failed-login throttle, with a Retry-After of secs seconds.
func requireThrottled(tb testing.TB, resp *http.Response, page string, secs int) {
	tb.Helper()
	require.Equal(tb, http.StatusTooManyRequests, resp.StatusCode, page)
	assert.Equal(tb, strconv.Itoa(secs), resp.Header.Get("Retry-After"))
	assert.Contains(tb, alert(tb, page), "Too many failed logins for this name: wait "+strconv.Itoa(secs))
}

func TestLoginThrottle(t *testing.T) {
	e := newEnv(t)
	e.player("skinner", game.FBI)
	const home = "203.0.113.7:40000"
	owner := e.client()
	resp, _ := owner.loginFrom(home, "skinner", "password-skinner", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.NotEmpty(t, owner.cookie("ss_device"), "the owner's browser is known from now on")

	// 60 guesses from 12 addresses, each within its address's limit.
	checked, throttled := 0, 0
	for a := range 12 {
		for i := range 5 {
			resp, page := e.client().loginFrom(addr(a), "skinner", fmt.Sprint("guess", a, i), nil)
			switch resp.StatusCode {
			case http.StatusForbidden:
				checked++
			case http.StatusTooManyRequests:
				requireThrottled(t, resp, page, 1)
				throttled++
			default:
				t.Fatalf("guess %d from %s: status %d", i, addr(a), resp.StatusCode)
			}
		}
	}

	t.Run("Guesses", func(t *testing.T) {
		// Ensure guesses from many addresses count against the account:
		// of 60 from 12 addresses, game.AccountBackoff.Free are checked,
		// the rest refused at once.
		assert.Equal(t, game.AccountBackoff.Free, checked)
		assert.Equal(t, 60-game.AccountBackoff.Free, throttled)
	})

	t.Run("Grows", func(t *testing.T) {
		// Ensure each guess after the wait doubles the next wait.
		for i, wait := range []int{1, 2, 4, 8} {
			e.clock.Add(time.Duration(wait) * time.Second)
			resp, page := e.client().loginFrom(addr(100+2*i), "skinner", "another guess", nil)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, page)
			resp, page = e.client().loginFrom(addr(101+2*i), "skinner", "password-skinner", nil)
			requireThrottled(t, resp, page, 2*wait)
		}
	})

	t.Run("OwnerNotLockedOut", func(t *testing.T) {
		// Ensure the owner's browser logs in at once, from another address
		// too, and so does a new browser at an address the owner logged in
		// from; only a browser and address the account never saw wait.
		resp, page := owner.loginFrom(addr(200), "skinner", "password-skinner", nil)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
		resp, page = e.client().loginFrom(home, "skinner", "password-skinner", nil)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
		resp, page = e.client().loginFrom(addr(201), "skinner", "password-skinner", nil)
		requireThrottled(t, resp, page, 16)
	})

	t.Run("KnownBrowserOwnMistakes", func(t *testing.T) {
		// Ensure a known browser is held back by its own failures only:
		// game.ClientBackoff.Free pass, then it waits.
		for i := range game.ClientBackoff.Free {
			resp, page := owner.loginFrom(addr(210+i), "skinner", "typo", nil)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, page)
		}
		resp, page := owner.loginFrom(addr(220), "skinner", "password-skinner", nil)
		requireThrottled(t, resp, page, 1)
		e.clock.Add(time.Second)
		resp, page = owner.loginFrom(addr(221), "skinner", "password-skinner", nil)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
	})

	t.Run("UnknownName", func(t *testing.T) {
		// Ensure a name nobody has is not throttled: every attempt is
		// checked (against the dummy hash) and refused as a wrong password.
		for i := range game.AccountBackoff.Free + 5 {
			resp, page := e.client().loginFrom(addr(300+i), "nobody", "guess", nil)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, page)
			assert.Equal(t, "Wrong name or password.", alert(t, page))
		}
	})
}
