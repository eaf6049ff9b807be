package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestRegister(t *testing.T) {
	e := newEnv(t)
	t.Run("OK", func(t *testing.T) {
		// Ensure enlisting creates the player, logs the browser in with a cookie, and the HQ greets them.
		c := e.client()
		resp, page := c.get("/register")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, `<label for="name">Code name</label>`)
		assert.Contains(t, page, `value="MIB"`)
		c.enlist("mulder", game.FBI)
		require.NotEmpty(t, c.cookie("ss_session"))
		resp, page = c.get("/game?function=hq")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "<strong>mulder</strong>")
		assert.Contains(t, page, `<body class="fbi" data-events="/game/events" data-page="hq" data-tick="0" data-round="1" data-interval="600000">`)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure a bad name, password or faction is 400 with the form again, saying which field, keeping the name.
		c := e.client()
		_, page := c.get("/register")
		token := csrf(t, page)
		for _, tc := range []struct{ name, password, faction, field string }{
			{"x", "password1", "FBI", "name"},
			{"scully", "short", "FBI", "password"},
			{"scully", "password1", "CIA", "faction"},
		} {
			resp, page := c.post("/register", url.Values{"csrf": {token}, "name": {tc.name}, "password": {tc.password}, "faction": {tc.faction}})
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, tc)
			assert.Contains(t, strings.ToLower(alert(t, page)), tc.field, tc)
			assert.Contains(t, page, `value="`+tc.name+`"`, tc)
		}
		assert.False(t, e.registered("scully"))
	})

	t.Run("ErrEveryProblem", func(t *testing.T) {
		// Ensure a form with several problems names them all at once.
		c := newEnv(t).client() // a game of its own: the attempts count towards the limit
		_, page := c.get("/register")
		resp, page := c.post("/register", url.Values{"csrf": {csrf(t, page)}, "name": {"x"}, "password": {"short"}, "faction": {"CIA"}})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		msg := alert(t, page)
		for _, want := range []string{"A name needs 3 to 20 characters", "A password needs 8 to 72 bytes", `Unknown faction "CIA"`} {
			assert.Contains(t, msg, want)
		}
	})

	t.Run("ErrWeakPassword", func(t *testing.T) {
		// Ensure a password easy to guess (a common one, or one built on
		// the player's name) is 400 with the form again, saying why and
		// what to do, and creates nobody.
		e := newEnv(t) // a game of its own: the attempts count towards the limit
		c := e.client()
		_, page := c.get("/register")
		for _, tc := range []struct{ password, why string }{
			{"12345678", "one of the most common passwords"},
			{"krycek1999", "your code name"},
		} {
			resp, page := c.post("/register", url.Values{"csrf": {csrf(t, page)}, "name": {"krycek"}, "password": {tc.password}, "faction": {"MIB"}})
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			msg := alert(t, page)
			assert.Contains(t, msg, "This password is too easy to guess: it is")
			assert.Contains(t, msg, tc.why)
			assert.Contains(t, msg, "Choose a longer one")
			assert.Contains(t, page, `value="krycek"`)
		}
		assert.False(t, e.registered("krycek"))
	})

	t.Run("ErrConflict", func(t *testing.T) {
		// Ensure a taken name is 409.
		e.player("skinner", game.FBI)
		c := e.client()
		_, page := c.get("/register")
		resp, page := c.post("/register", url.Values{"csrf": {csrf(t, page)}, "name": {"skinner"}, "password": {"password-skinner"}, "faction": {"MIB"}})
		assert.Equal(t, http.StatusConflict, resp.StatusCode)
		assert.Contains(t, alert(t, page), "taken")
	})

	t.Run("ErrCSRF", func(t *testing.T) {
		// Ensure a register POST without the form token, or with one not matching its cookie, is 403 and creates nobody.
		c := e.client()
		form := url.Values{"name": {"krycek"}, "password": {"password1"}, "faction": {"MIB"}}
		resp, page := c.post("/register", form)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, page, "security token")
		c.get("/register")
		form.Set("csrf", "0123456789abcdef0123456789abcdef")
		resp, _ = c.post("/register", form)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.False(t, e.registered("krycek"))
	})

	t.Run("ErrCrossOrigin", func(t *testing.T) {
		// Ensure a browser POST from another site is refused before any handler runs.
		c := e.client()
		_, page := c.get("/register")
		req := formRequest("/register", url.Values{"csrf": {csrf(t, page)}, "name": {"krycek"}, "password": {"password1"}, "faction": {"MIB"}})
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, page := c.do(req)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Contains(t, page, "another site")
		assert.False(t, e.registered("krycek"))
	})
}

func TestLogin(t *testing.T) {
	e := newEnv(t)
	e.player("skinner", game.FBI)
	t.Run("OK", func(t *testing.T) {
		// Ensure the right password logs in with a session cookie and sends the browser to HQ.
		c := e.client()
		resp, page := c.get("/login")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		resp, _ = c.post("/login", url.Values{"csrf": {csrf(t, page)}, "name": {"skinner"}, "password": {"password-skinner"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/game?function=hq", resp.Header.Get("Location"))
		var session *http.Cookie
		for _, ck := range resp.Cookies() {
			if ck.Name == "ss_session" {
				session = ck
			}
		}
		require.NotNil(t, session)
		assert.True(t, session.HttpOnly)
		assert.Equal(t, http.SameSiteLaxMode, session.SameSite)
		assert.Equal(t, 30*24*3600, session.MaxAge)
		assert.False(t, session.Secure)
		resp, page = c.get("/game?function=hq")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "<strong>skinner</strong>")
	})

	t.Run("ErrUnauthorized", func(t *testing.T) {
		// Ensure a wrong password is 403 (no WWW-Authenticate scheme fits a
		// form, so not 401) with the form again and no session.
		c := e.client()
		_, page := c.get("/login")
		resp, page := c.post("/login", url.Values{"csrf": {csrf(t, page)}, "name": {"skinner"}, "password": {"wrong-password"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Equal(t, "Wrong name or password.", alert(t, page))
		assert.Contains(t, page, `value="skinner"`)
		assert.Empty(t, c.cookie("ss_session"))
	})

	t.Run("ErrCSRF", func(t *testing.T) {
		// Ensure a login POST without the form token is 403 and logs nobody in.
		c := e.client()
		resp, _ := c.post("/login", url.Values{"name": {"skinner"}, "password": {"password-skinner"}})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Empty(t, c.cookie("ss_session"))
	})
}

func TestRegister_GameFull(t *testing.T) {
	// Ensure registration past -max-players is refused saying the game is
	// full, creating nobody.
	e := newEnvWith(t, func(o *game.Options) { o.MaxPlayers = 1 })
	e.player("mulder", game.FBI)
	c := e.client()
	_, page := c.get("/register")
	resp, page := c.post("/register", url.Values{"csrf": {csrf(t, page)}, "name": {"scully"}, "password": {"password-scully"}, "faction": {"FBI"}})
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
	assert.Contains(t, alert(t, page), "The game is full")
	assert.False(t, e.registered("scully"))
}

func TestLogout(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Ensure logging out deletes the session: the cookie is cleared, and the cookie and the tid both stop working.
		e := newEnv(t)
		c := e.client()
		c.enlist("doggett", game.FBI)
		resp, page := c.get("/logout")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, page, "Leave the building?")
		stolen := c.cookie("ss_session")
		sid := sessionID(t, stolen)
		resp, _ = c.post("/logout", url.Values{"csrf": {csrf(t, page)}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/", resp.Header.Get("Location"))
		assert.Empty(t, c.cookie("ss_session"))

		replay := e.client()
		replay.jar.SetCookies(base, []*http.Cookie{{Name: "ss_session", Value: stolen}})
		resp, _ = replay.get("/game?function=hq")
		requireLogin(t, resp)
		resp, _ = e.client().get("/game?function=hq&tid=" + sid)
		requireLogin(t, resp)
	})

	t.Run("OtherSessionsLive", func(t *testing.T) {
		// Ensure a plain logout ends this session only, as the page says,
		// and "log out everywhere" ends every session of the player.
		e := newEnv(t)
		p, other := e.player("doggett", game.FBI)
		_, third := e.player("reyes", game.FBI) // another player's session
		c := e.client()
		c.enlist("monica", game.FBI)
		_, page := c.get("/logout?tid=" + other)
		assert.Contains(t, page, "Your other browsers and devices stay logged in, unless you log out everywhere.")
		assert.Contains(t, page, `<button type="submit" name="everywhere" value="1" class="quiet">Log out everywhere</button>`)
		mine := e.tid(p.ID)
		resp, _ := e.client().post("/logout?tid="+mine, url.Values{"csrf": {csrf(t, page)}})
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "each session has its own token")
		_, page = e.client().get("/logout?tid=" + mine)
		resp, _ = e.client().post("/logout?tid="+mine, url.Values{"csrf": {csrf(t, page)}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		resp, _ = e.client().get("/game?function=hq&tid=" + mine)
		requireLogin(t, resp)
		resp, _ = e.client().get("/game?function=hq&tid=" + other)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the player's other session lives on")

		extra := e.tid(p.ID)
		_, page = e.client().get("/logout?tid=" + other)
		resp, _ = e.client().post("/logout?tid="+other, url.Values{"csrf": {csrf(t, page)}, "everywhere": {"1"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		for _, sid := range []string{other, extra} {
			resp, _ = e.client().get("/game?function=hq&tid=" + sid)
			requireLogin(t, resp)
		}
		resp, _ = e.client().get("/game?function=hq&tid=" + third)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "another player's session lives on")
	})

	t.Run("ErrCSRF", func(t *testing.T) {
		// Ensure a logout POST without the token is 403 and the session lives on.
		e := newEnv(t)
		_, tid := e.player("reyes", game.FBI)
		c := e.client()
		resp, _ := c.post("/logout?tid="+tid, url.Values{})
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		resp, _ = c.get("/game?function=hq&tid=" + tid)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})
}
