package handlers_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// withCookie returns a client whose jar holds only the session cookie value.
func (e *env) withCookie(value string) *client {
	c := e.client()
	c.jar.SetCookies(base, []*http.Cookie{{Name: "ss_session", Value: value}})
	return c
}

// encode returns a session cookie value for sid under the given keys.
func encode(tb testing.TB, hashKey, blockKey []byte, sid string) string {
	tb.Helper()
	v, err := securecookie.New(hashKey, blockKey).SetSerializer(securecookie.JSONEncoder{}).Encode("ss_session", sid)
	require.NoError(tb, err)
	return v
}

func TestSession(t *testing.T) {
	e := newEnv(t)
	mulder, sid := e.player("mulder", game.FBI)

	t.Run("OK", func(t *testing.T) {
		// Ensure a cookie made with the server's keys is accepted.
		resp, page := e.withCookie(encode(t, hashKey, blockKey, sid)).get("/game?function=hq")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "<strong>mulder</strong>")
		assert.NotContains(t, page, sid, "a page reached by cookie must not show the session id")
	})

	t.Run("TID", func(t *testing.T) {
		// Ensure the State Secrets URL works without cookies, and its links and forms carry the tid on.
		resp, page := e.client().get("/game?function=hq&tid=" + sid)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, `href="/game?function=sources&amp;tid=`+sid+`"`)
		assert.Contains(t, page, `action="/game?tid=`+sid+`"`)
		assert.Contains(t, page, `action="/logout?tid=`+sid+`"`)
		assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
		assert.Empty(t, resp.Cookies(), "a tid page sets no cookie")
	})

	t.Run("ErrNoSession", func(t *testing.T) {
		// Ensure a request without a session is sent to /login: 303 for GET and POST, and nothing is done.
		for _, target := range []string{"/game?function=hq", "/game?function=ranking", "/game", "/logout"} {
			resp, _ := e.client().get(target)
			requireLogin(t, resp)
		}
		before := e.stats(mulder.ID)
		resp, _ := e.client().post("/game", url.Values{"function": {"recruit"}})
		requireLogin(t, resp)
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("ErrCookie", func(t *testing.T) {
		// Ensure tampered cookies, and cookies sealed with other keys, are refused.
		good := encode(t, hashKey, blockKey, sid)
		flipped := []byte(good)
		flipped[len(flipped)/2] ^= 1
		for name, value := range map[string]string{
			"tampered":        string(flipped),
			"truncated":       good[:len(good)-4],
			"other hash key":  encode(t, bytes.Repeat([]byte{9}, 64), blockKey, sid),
			"other block key": encode(t, hashKey, bytes.Repeat([]byte{9}, 32), sid),
			"plain sid":       sid,
			"empty":           "",
		} {
			resp, _ := e.withCookie(value).get("/game?function=hq")
			assert.Equal(t, http.StatusSeeOther, resp.StatusCode, name)
			assert.Equal(t, "/login", resp.Header.Get("Location"), name)
		}
	})

	t.Run("ErrTID", func(t *testing.T) {
		// Ensure a tid not of 32 lowercase hex digits, or unknown, is refused, even next to a good cookie.
		for _, tid := range []string{"", "xyz", sid[:31], sid + "0", strings.ToUpper(sid), "0123456789abcdef0123456789abcdeg",
			"00000000000000000000000000000000"} {
			resp, _ := e.client().get("/game?function=hq&tid=" + url.QueryEscape(tid))
			assert.Equal(t, http.StatusSeeOther, resp.StatusCode, tid)
			assert.Equal(t, "/login", resp.Header.Get("Location"), tid)
		}
		resp, _ := e.withCookie(encode(t, hashKey, blockKey, sid)).get("/game?function=hq&tid=00000000000000000000000000000000")
		requireLogin(t, resp)
	})
}

func TestSessionExpired(t *testing.T) {
	// Ensure a session past its TTL on the store's clock is refused, by cookie and by tid.
	e := newEnv(t)
	_, sid := e.player("mulder", game.FBI)
	c := e.withCookie(encode(t, hashKey, blockKey, sid))
	resp, _ := c.get("/game?function=hq")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	e.clock.Add(31 * 24 * time.Hour)
	resp, _ = c.get("/game?function=hq")
	requireLogin(t, resp)
	resp, _ = e.client().get("/game?function=hq&tid=" + sid)
	requireLogin(t, resp)
}

func TestSecurityHeaders(t *testing.T) {
	// Ensure every kind of response carries the security headers, and pages are not cached.
	e := newEnv(t)
	_, sid := e.player("mulder", game.FBI)
	for _, target := range []string{"/", "/static/style.css", "/login", "/register", "/nope",
		"/game?function=hq&tid=" + sid, "/game?function=nope&tid=" + sid, "/game?function=hq"} {
		resp, _ := e.client().get(target)
		h := resp.Header
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), target)
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), target)
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"), target)
		assert.Contains(t, h.Get("Content-Security-Policy"), "default-src 'none'; script-src 'self'; style-src 'self'", target)
		if strings.HasPrefix(target, "/game") && resp.StatusCode != http.StatusSeeOther || target == "/login" {
			assert.Equal(t, "no-store", h.Get("Cache-Control"), target)
		}
	}
}
