package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
)

// loginFrom posts the login form from remoteAddr ("ip:port"), with a form
// token from GET /login (which the limit does not count), and the extra
// headers, returning the response.
func (c *client) loginFrom(remoteAddr, name, password string, header http.Header) (*http.Response, string) {
	c.tb.Helper()
	_, page := c.get("/login")
	req := formRequest("/login", url.Values{"csrf": {csrf(c.tb, page)}, "name": {name}, "password": {password}})
	req.RemoteAddr = remoteAddr
	for k, v := range header {
		req.Header[k] = v
	}
	return c.do(req)
}

// requireLimited asserts resp is the 429 login or register form with a
// Retry-After of secs seconds, saying so, and that no session was started.
func requireLimited(tb testing.TB, c *client, resp *http.Response, page string, secs int) {
	tb.Helper()
	require.Equal(tb, http.StatusTooManyRequests, resp.StatusCode, page)
	assert.Equal(tb, strconv.Itoa(secs), resp.Header.Get("Retry-After"))
	unit := " seconds "
	if secs == 1 {
		unit = " second "
	}
	assert.Contains(tb, alert(tb, page), "Too many attempts from your address: wait "+strconv.Itoa(secs)+unit)
	assert.Contains(tb, page, `name="csrf"`, "the form again")
	assert.Empty(tb, c.cookie("ss_session"))
}

func TestAuthLimit(t *testing.T) {
	const alice, bob = "192.0.2.10:40000", "198.51.100.7:40000"
	refill := int(handlers.AuthRefill.Seconds())

	t.Run("Login", func(t *testing.T) {
		// Ensure the attempt after AuthBurst failed logins from one address
		// is 429 with Retry-After, before any password check (the right
		// password is refused too); another address is unaffected; and one
		// AuthRefill later one more attempt goes through.
		e := newEnv(t)
		e.player("skinner", game.FBI)
		c := e.client()
		for i := range handlers.AuthBurst {
			resp, page := c.loginFrom(alice, "skinner", "wrong-password", nil)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "attempt %d: %s", i+1, page)
		}
		resp, page := c.loginFrom(alice, "skinner", "password-skinner", nil)
		requireLimited(t, c, resp, page, refill)
		assert.Contains(t, page, `value="skinner"`, "the name kept")

		other := e.client()
		resp, _ = other.loginFrom(bob, "skinner", "password-skinner", nil)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "another address has its own limit")

		e.clock.Add(handlers.AuthRefill - 1)
		resp, page = c.loginFrom(alice, "skinner", "password-skinner", nil)
		requireLimited(t, c, resp, page, 1)
		e.clock.Add(1)
		resp, _ = c.loginFrom(alice, "skinner", "password-skinner", nil)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.NotEmpty(t, c.cookie("ss_session"))
		fresh := e.client()
		resp, page = fresh.loginFrom(alice, "skinner", "password-skinner", nil)
		requireLimited(t, fresh, resp, page, refill)
	})

	t.Run("Register", func(t *testing.T) {
		// Ensure registering counts against the same limit and, over it, is
		// 429 and creates nobody.
		e := newEnv(t)
		register := func(name string) (*client, *http.Response, string) {
			c := e.client()
			_, page := c.get("/register")
			req := formRequest("/register", url.Values{
				"csrf": {csrf(t, page)}, "name": {name}, "password": {"password-" + name}, "faction": {"MIB"}})
			req.RemoteAddr = alice
			resp, page := c.do(req)
			return c, resp, page
		}
		resp, page := e.client().loginFrom(alice, "nobody", "password1", nil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, page)
		for i := range handlers.AuthBurst - 1 {
			_, resp, page := register(fmt.Sprint("agent", i))
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
		}
		c, resp, page := register("krycek")
		requireLimited(t, c, resp, page, refill)
		assert.Contains(t, page, `value="krycek"`)
		assert.False(t, e.registered("krycek"))
	})

	t.Run("IPv6", func(t *testing.T) {
		// Ensure IPv6 clients count per /64: another address in the same
		// /64 shares the limit, one in another /64 does not.
		e := newEnv(t)
		e.player("skinner", game.FBI)
		c := e.client()
		for range handlers.AuthBurst {
			c.loginFrom("[2001:db8:1:2::1]:40000", "skinner", "wrong-password", nil)
		}
		resp, page := c.loginFrom("[2001:db8:1:2:ffff::9]:40001", "skinner", "password-skinner", nil)
		requireLimited(t, c, resp, page, refill)
		resp, _ = c.loginFrom("[2001:db8:1:3::1]:40000", "skinner", "password-skinner", nil)
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	})

	t.Run("XForwardedForIgnored", func(t *testing.T) {
		// Ensure that without TrustProxy a client cannot dodge the limit by
		// sending X-Forwarded-For.
		e := newEnv(t)
		e.player("skinner", game.FBI)
		c := e.client()
		for i := range handlers.AuthBurst + 1 {
			resp, _ := c.loginFrom(alice, "skinner", "wrong-password", http.Header{
				"X-Forwarded-For": {fmt.Sprintf("203.0.113.%d", i)}})
			if i < handlers.AuthBurst {
				require.Equal(t, http.StatusForbidden, resp.StatusCode)
			} else {
				require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			}
		}
	})

	t.Run("TrustProxy", func(t *testing.T) {
		// Ensure that with TrustProxy clients count by the last address of
		// X-Forwarded-For (the proxy's own), not the proxy's RemoteAddr nor
		// the addresses the client wrote in front of it.
		e := newEnv(t)
		e.player("skinner", game.FBI)
		srv, err := handlers.New(e.store, handlers.Options{
			HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey, Now: e.clock.Now, TrustProxy: true})
		require.NoError(t, err)
		c := e.client()
		c.h = srv
		const proxy = "127.0.0.1:50000"
		for i := range handlers.AuthBurst {
			resp, _ := c.loginFrom(proxy, "skinner", "wrong-password", http.Header{
				"X-Forwarded-For": {fmt.Sprintf("10.0.0.%d, 203.0.113.5", i)}})
			require.Equal(t, http.StatusForbidden, resp.StatusCode)
		}
		resp, page := c.loginFrom(proxy, "skinner", "password-skinner", http.Header{
			"X-Forwarded-For": {"10.9.9.9", "203.0.113.5"}})
		requireLimited(t, c, resp, page, refill)
		resp, _ = c.loginFrom(proxy, "skinner", "password-skinner", http.Header{"X-Forwarded-For": {"203.0.113.6"}})
		assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "another client behind the same proxy")
	})
}
