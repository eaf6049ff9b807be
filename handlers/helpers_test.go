package handlers_test

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"flag"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.html from the pages rendered now")

// epoch is the fixed time every test game starts at.
var epoch = time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)

// Fixed keys, so rendered pages are deterministic apart from session ids.
var (
	hashKey  = bytes.Repeat([]byte{0x11}, 64)
	blockKey = bytes.Repeat([]byte{0x22}, 32)
	csrfKey  = bytes.Repeat([]byte{0x33}, 32)
)

// env is one game: a store on a file in a temporary folder, a Server over
// it, and the clock both read.
type env struct {
	tb      testing.TB
	path    string
	clock   *testkit.Clock
	store   *game.Store
	srv     *handlers.Server
	options func(*game.Options) // changes the store's Options; nil: none
}

// newEnv opens a fresh game with a fixed clock, a fixed random source and
// the cheapest bcrypt cost.
func newEnv(tb testing.TB) *env {
	tb.Helper()
	return newEnvWith(tb, nil)
}

// newEnvWith is newEnv with the store's Options changed by options.
func newEnvWith(tb testing.TB, options func(*game.Options)) *env {
	tb.Helper()
	e := &env{tb: tb, path: filepath.Join(tb.TempDir(), "game.db"), clock: testkit.NewClock(epoch), options: options}
	e.open(bcrypt.MinCost)
	return e
}

// open opens (or reopens) the store at e.path and builds a new Server on it.
func (e *env) open(cost int) {
	e.tb.Helper()
	opts := game.Options{
		BcryptCost: cost,
		Rand:       rand.New(rand.NewPCG(1, 2)),
		Now:        e.clock.Now,
	}
	if e.options != nil {
		e.options(&opts)
	}
	store, err := game.Open(e.path, opts)
	require.NoError(e.tb, err)
	e.tb.Cleanup(func() { store.Close() })
	e.store = store
	e.srv, err = handlers.New(store, handlers.Options{
		HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey,
		Now:  e.clock.Now,
		Rand: rand.NewChaCha8([32]byte{7}),
	})
	require.NoError(e.tb, err)
}

// reopen closes the store and opens the same file again with a new Server,
// as a restart of the program would.
func (e *env) reopen() {
	e.tb.Helper()
	require.NoError(e.tb, e.store.Close())
	e.open(bcrypt.MinCost)
}

// reopenWithCost reopens the store with another bcrypt cost.
func (e *env) reopenWithCost(cost int) {
	e.tb.Helper()
	require.NoError(e.tb, e.store.Close())
	e.open(cost)
}

// player creates a player straight in the store and returns it with a
// session id (the tid).
func (e *env) player(name string, f game.Faction) (*game.Player, string) {
	e.tb.Helper()
	p, err := e.store.Register(e.tb.Context(), name, "password-"+name, f)
	require.NoError(e.tb, err)
	sess, err := e.store.CreateSession(e.tb.Context(), p.ID)
	require.NoError(e.tb, err)
	return p, sess.ID
}

// registered reports whether a player called name exists.
func (e *env) registered(name string) bool {
	e.tb.Helper()
	rk, err := e.store.Ranking(e.tb.Context())
	require.NoError(e.tb, err)
	for _, p := range rk.Players {
		if p.Name == name {
			return true
		}
	}
	return false
}

// stats returns a player as the store has it now.
func (e *env) stats(id int64) game.Player {
	e.tb.Helper()
	p, err := e.store.Player(e.tb.Context(), id)
	require.NoError(e.tb, err)
	return *p
}

// exec runs a statement on a connection of its own, as another process
// on the database would, and brings the store's read cache up to it: for
// figures no order can set (a rival's cash of $7,919, say).
func (e *env) exec(query string, args ...any) {
	e.tb.Helper()
	db, err := sql.Open("sqlite", game.DSN(e.path))
	require.NoError(e.tb, err)
	defer db.Close()
	_, err = db.Exec(query, args...)
	require.NoError(e.tb, err)
	require.NoError(e.tb, e.store.Sync(e.tb.Context()))
}

// client is a browser with a cookie jar, calling the Server directly, or
// through a server on loopback with -engine (e.handler).
type client struct {
	tb  testing.TB
	h   http.Handler
	jar *cookiejar.Jar
}

var base = &url.URL{Scheme: "http", Host: "game.test", Path: "/"}

func (e *env) client() *client {
	jar, err := cookiejar.New(nil)
	require.NoError(e.tb, err)
	return &client{tb: e.tb, h: e.handler(), jar: jar}
}

// do sends req with the jar's cookies, stores the cookies of the response
// and returns it with its body read.
func (c *client) do(req *http.Request) (*http.Response, string) {
	c.tb.Helper()
	for _, ck := range c.jar.Cookies(base) {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	resp := rec.Result()
	c.jar.SetCookies(base, resp.Cookies())
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.tb, err)
	return resp, string(body)
}

func (c *client) get(target string) (*http.Response, string) {
	c.tb.Helper()
	return c.do(httptest.NewRequest(http.MethodGet, target, nil))
}

func (c *client) post(target string, form url.Values) (*http.Response, string) {
	c.tb.Helper()
	return c.do(formRequest(target, form))
}

// formRequest returns a POST of form to target, URL-encoded.
func formRequest(target string, form url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// cookie returns the jar's cookie name, or "".
func (c *client) cookie(name string) string {
	for _, ck := range c.jar.Cookies(base) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

var alertRE = regexp.MustCompile(`role="alert">([^<]*)</p>`)

// alert returns the unescaped text of the error a form page shows.
func alert(tb testing.TB, page string) string {
	tb.Helper()
	m := alertRE.FindStringSubmatch(page)
	require.NotNil(tb, m, "no alert in the page")
	return html.UnescapeString(m[1])
}

// sessionID decodes a session cookie value with the test keys.
func sessionID(tb testing.TB, cookie string) string {
	tb.Helper()
	var sid string
	sc := securecookie.New(hashKey, blockKey).SetSerializer(securecookie.JSONEncoder{})
	require.NoError(tb, sc.Decode("ss_session", cookie, &sid))
	return sid
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf returns the CSRF token in a rendered page's first form.
func csrf(tb testing.TB, page string) string {
	tb.Helper()
	m := csrfRE.FindStringSubmatch(page)
	require.NotNil(tb, m, "no csrf field in the page")
	return m[1]
}

// enlist registers a player through the forms, as a browser does, and
// leaves the client logged in.
func (c *client) enlist(name string, f game.Faction) {
	c.tb.Helper()
	_, page := c.get("/register")
	resp, body := c.post("/register", url.Values{
		"csrf": {csrf(c.tb, page)}, "name": {name}, "password": {"password-" + name}, "faction": {string(f)},
	})
	require.Equal(c.tb, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(c.tb, "/game?function=hq", resp.Header.Get("Location"))
}

// act posts an action form taken from the page at from, with the page's
// CSRF token, and returns the response.
func (c *client) act(from string, form url.Values) (*http.Response, string) {
	c.tb.Helper()
	resp, page := c.get(from)
	require.Equal(c.tb, http.StatusOK, resp.StatusCode, page)
	form.Set("csrf", csrf(c.tb, page))
	action := "/game"
	if u, _ := url.Parse(from); u.Query().Has("tid") {
		action += "?tid=" + u.Query().Get("tid")
	}
	return c.post(action, form)
}

// refused posts an action form from the page at from that must be refused:
// it asserts the answer is 303 See Other back to from (so a reload sends a
// GET), follows it, and returns the page there, which shows the refusal
// once, and the refusal's text.
func (c *client) refused(from string, form url.Values) (page, refusal string) {
	c.tb.Helper()
	resp, body := c.act(from, form)
	require.Equal(c.tb, http.StatusSeeOther, resp.StatusCode, "%v: %s", form, body)
	require.Equal(c.tb, from, location(resp), form)
	resp, page = c.get(resp.Header.Get("Location"))
	require.Equal(c.tb, http.StatusOK, resp.StatusCode, page)
	refusal = alert(c.tb, page)
	_, again := c.get(from)
	require.NotContains(c.tb, again, `class="flash`, "a reload shows the refusal no more")
	return page, refusal
}

// location is resp's Location without the flash parameter that an action
// on a page reached by tid adds last (flash.go).
func location(resp *http.Response) string {
	loc := resp.Header.Get("Location")
	if i := strings.Index(loc, "&flash="); i >= 0 {
		return loc[:i]
	}
	return loc
}

// requireLogin asserts resp sends the client to /login.
func requireLogin(tb testing.TB, resp *http.Response) {
	tb.Helper()
	require.Equal(tb, http.StatusSeeOther, resp.StatusCode)
	require.Equal(tb, "/login", resp.Header.Get("Location"))
}

// newServerWithStoreKeys builds a Server on e's store that takes its keys
// from the store, as the production set-up does.
func newServerWithStoreKeys(e *env) (*handlers.Server, error) {
	return handlers.New(e.store, handlers.Options{Now: e.clock.Now})
}

// cheapest returns the source with the lowest asking price, one a new
// player can pay.
func cheapest(tb testing.TB, e *env) game.Source {
	tb.Helper()
	sources, err := e.store.Sources(context.Background())
	require.NoError(tb, err)
	return slices.MinFunc(sources, func(a, b game.Source) int { return cmp.Compare(a.Price, b.Price) })
}
