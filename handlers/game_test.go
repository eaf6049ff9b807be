package handlers_test

import (
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// twoPlayers opens a game with mulder (FBI) and krycek (MIB) and returns
// mulder's session id and both players.
func twoPlayers(t *testing.T) (e *env, tid string, mulder, krycek *game.Player) {
	e = newEnv(t)
	mulder, tid = e.player("mulder", game.FBI)
	krycek, _ = e.player("krycek", game.MIB)
	return e, tid, mulder, krycek
}

func TestGamePages(t *testing.T) {
	e, tid, _, krycek := twoPlayers(t)
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, sources)

	for _, tc := range []struct {
		function string
		want     []string
	}{
		{"hq", []string{"<h1>Headquarters</h1>", fmt.Sprintf(`<dd>$<span data-live="cash">%d</span> <span class="unit">pay stops at $%d</span></dd>`, game.StartCash, game.MaxCash), `<time datetime="2026-11-30T10:40:00Z" data-countdown data-live="next">10:40:00 UTC</time>`,
			"Welcome to the FBI, mulder.", `name="function" value="recruit"`, `name="function" value="fortify"`, `name="function" value="rumor"`}},
		{"", []string{"<h1>Headquarters</h1>"}},
		{"sources", []string{"<h1>Sources</h1>", html.EscapeString(sources[0].Name), `name="source" value="` + strconv.FormatInt(sources[0].ID, 10) + `"`,
			`<label class="vh" for="offer-`}},
		{"dossiers", []string{"<h1>Dossiers</h1>", `">krycek</a></strong>`, `name="target" value="` + strconv.FormatInt(krycek.ID, 10) + `"`,
			`value="spy"`, "No theft: krycek holds 0 Secrets, not more than your 0.", `class="redacted"`, "no intel"}},
		{"ranking", []string{"<h1>Ranking</h1>", "The FBI", "The Men in Black", `data-name="mulder" data-faction="FBI" class="you">`, "krycek",
			`<span class="protected" data-protected-until="36">protected until tick <span data-part="tick">36</span> (<span data-part="in">in 6 h</span>)</span>`}},
		{"news", []string{"<h1>News</h1>", "mulder joined the FBI.", "krycek joined the MIB."}},
		{"board", []string{"<h1>Board</h1>", `<label for="body">Message</label>`, "The board is empty."}},
	} {
		t.Run("OK/"+tc.function, func(t *testing.T) {
			// Ensure each game page renders for its player, by tid, with its content and the nav.
			resp, page := e.client().get("/game?function=" + tc.function + "&tid=" + tid)
			require.Equal(t, http.StatusOK, resp.StatusCode, page)
			assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
			assert.Equal(t, strconv.Itoa(len(page)), resp.Header.Get("Content-Length"))
			for _, want := range tc.want {
				assert.Contains(t, page, want)
			}
			function := tc.function
			if function == "" {
				function = "hq"
			}
			assert.Contains(t, page, `href="/game?function=`+function+`&amp;tid=`+tid+`" aria-current="page"`)
		})
	}

	t.Run("ErrNotFound", func(t *testing.T) {
		// Ensure an unknown function is the 404 page, within the game's layout.
		resp, page := e.client().get("/game?function=bribe&tid=" + tid)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Contains(t, page, "There is no page called &#34;bribe&#34;")
		assert.Contains(t, page, "<strong>mulder</strong>")
		assert.Contains(t, page, `href="/game?function=hq&amp;tid=`+tid+`">Back to headquarters`)
	})
}

func TestHQStableLength(t *testing.T) {
	// Ensure the HQ page, requested again with no change in the game, is byte-identical (ab counts a
	// different length as a failed request), also after an action's flash has been shown once.
	e, tid, _, _ := twoPlayers(t)
	c := e.client()
	hq := "/game?function=hq&tid=" + tid
	_, first := c.get(hq)
	_, second := c.get(hq)
	require.Equal(t, first, second)

	resp, _ := c.act(hq, url.Values{"function": {"recruit"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, withFlash := c.get(hq)
	assert.Contains(t, withFlash, `class="flash"`)
	_, third := c.get(hq)
	_, fourth := c.get(hq)
	assert.NotContains(t, third, `class="flash"`)
	assert.Equal(t, third, fourth)
	assert.Equal(t, third, e.mustGet(hq))
}

// mustGet returns the page at target for a client without cookies (as ab is).
func (e *env) mustGet(target string) string {
	e.tb.Helper()
	resp, page := e.client().get(target)
	require.Equal(e.tb, http.StatusOK, resp.StatusCode)
	return page
}

func TestActions(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		// Ensure each action is done, answered 303 to its page, and its outcome shown there once.
		e, tid, mulder, krycek := twoPlayers(t)
		sources, err := e.store.Sources(t.Context())
		require.NoError(t, err)
		target := strconv.FormatInt(krycek.ID, 10)
		for _, tc := range []struct {
			form  url.Values
			page  string
			check func(before, after game.Player)
		}{
			{url.Values{"function": {"haggle"}, "source": {strconv.FormatInt(sources[0].ID, 10)}, "offer": {"10"},
				"price": {strconv.Itoa(sources[0].Price)}}, "sources",
				func(b, a game.Player) { // a sale takes HaggleAP, a refusal HaggleFailAP
					assert.Contains(t, []int{b.AP - game.HaggleAP, b.AP - game.HaggleFailAP}, a.AP)
				}},
			{url.Values{"function": {"recruit"}}, "hq", func(b, a game.Player) { assert.Equal(t, b.Agents+1, a.Agents) }},
			{url.Values{"function": {"fortify"}}, "hq", func(b, a game.Player) { assert.Equal(t, b.Security+1, a.Security) }},
			{url.Values{"function": {"rumor"}}, "hq", func(b, a game.Player) { assert.Equal(t, b.AP-game.RumorAP, a.AP) }},
			{url.Values{"function": {"rumor"}, "count": {"3"}}, "hq", func(b, a game.Player) { assert.Equal(t, b.AP-3*game.RumorAP, a.AP) }},
			{url.Values{"function": {"spy"}, "target": {target}}, "dossiers", func(b, a game.Player) { assert.Equal(t, b.AP-game.SpyAP, a.AP) }},
			{url.Values{"function": {"post"}, "body": {"The truth is out there."}}, "board", func(b, a game.Player) { assert.Equal(t, b, a) }},
		} {
			c := e.client()
			from := "/game?function=" + tc.page + "&tid=" + tid
			before := e.stats(mulder.ID)
			resp, body := c.act(from, tc.form)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, "%s: %s", tc.form, body)
			assert.Equal(t, from, location(resp))
			tc.check(before, e.stats(mulder.ID))
			_, page := c.get(from)
			assert.Contains(t, page, `<p class="flash" role="status">`, tc.form)
			_, page = c.get(from)
			assert.NotContains(t, page, `class="flash"`, tc.form)
		}
		_, board := e.client().get("/game?function=board&tid=" + tid)
		assert.Contains(t, board, "The truth is out there.")
	})

	t.Run("OKCookie", func(t *testing.T) {
		// Ensure a player logged in by cookie acts through /game without a tid and is sent back without one.
		e := newEnv(t)
		c := e.client()
		c.enlist("scully", game.FBI)
		resp, _ := c.act("/game?function=hq", url.Values{"function": {"fortify"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		assert.Equal(t, "/game?function=hq", resp.Header.Get("Location"))
		_, page := c.get("/game?function=hq")
		assert.Contains(t, page, `<p class="flash" role="status">`)
	})

	// The refusals share one game: each must leave it as it was.
	e, tid, mulder, krycek := twoPlayers(t)
	t.Run("ErrCSRF", func(t *testing.T) {
		// Ensure an action without the token, or with another session's, is 403 and changes nothing.
		_, other := e.client().get("/game?function=hq&tid=" + e.tid(krycek.ID))
		before := e.stats(mulder.ID)
		for name, form := range map[string]url.Values{
			"missing": {"function": {"recruit"}},
			"empty":   {"function": {"recruit"}, "csrf": {""}},
			"wrong":   {"function": {"recruit"}, "csrf": {strings.Repeat("0", 64)}},
			"other":   {"function": {"recruit"}, "csrf": {csrf(t, other)}},
		} {
			resp, page := e.client().post("/game?tid="+tid, form)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
			assert.Contains(t, page, "security token", name)
		}
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure a malformed field sends the player back to the form's page
		// with a refusal naming the field, and changes nothing.
		before := e.stats(mulder.ID)
		for _, tc := range []struct {
			page  string
			form  url.Values
			field string
		}{
			{"sources", url.Values{"function": {"haggle"}, "source": {"1"}, "offer": {"lots"}}, `"offer"`},
			{"sources", url.Values{"function": {"haggle"}, "source": {"1"}, "offer": {"-5"}}, `"offer"`},
			{"sources", url.Values{"function": {"haggle"}, "source": {"1"}}, `"offer"`},
			{"sources", url.Values{"function": {"haggle"}, "offer": {"10"}}, `"source"`},
			{"sources", url.Values{"function": {"haggle"}, "source": {"1"}, "offer": {"10"}}, `"price"`},
			{"sources", url.Values{"function": {"haggle"}, "source": {"1"}, "offer": {"10"}, "price": {"cheap"}}, `"price"`},
			{"dossiers", url.Values{"function": {"spy"}, "target": {"krycek"}}, `"target"`},
			{"dossiers", url.Values{"function": {"steal"}, "target": {"0"}}, `"target"`},
			{"hq", url.Values{"function": {"rumor"}, "count": {"many"}}, `"count"`},
		} {
			_, refusal := e.client().refused("/game?function="+tc.page+"&tid="+tid, tc.form)
			assert.Contains(t, refusal, "The field "+tc.field, tc.form)
		}
		for _, tc := range []struct {
			form   url.Values
			status int
			text   string
		}{
			// No page has a form for these: the error page.
			{url.Values{}, http.StatusBadRequest, `The field &#34;function&#34; is missing`},
			{url.Values{"function": {"bribe"}}, http.StatusBadRequest, `There is no action called &#34;bribe&#34;`},
		} {
			resp, page := e.client().act("/game?function=hq&tid="+tid, tc.form)
			assert.Equal(t, tc.status, resp.StatusCode, tc.form)
			assert.Contains(t, page, tc.text)
		}
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("ErrRefused", func(t *testing.T) {
		// Ensure an action the rules refuse sends the player back to the
		// page it came from, showing the rules' reason there once, and
		// changes nothing.
		before := e.stats(mulder.ID)
		page, refusal := e.client().refused("/game?function=dossiers&tid="+tid,
			url.Values{"function": {"steal"}, "target": {strconv.FormatInt(krycek.ID, 10)}})
		assert.Contains(t, refusal, "protected from theft")
		assert.Contains(t, page, `<h1>Dossiers</h1>`, "the refusal is on the page the form was on")
		_, refusal = e.client().refused("/game?function=dossiers&tid="+tid, url.Values{"function": {"spy"}, "target": {"99999"}})
		assert.Contains(t, refusal, "There is no player #99999")
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("ErrPostKept", func(t *testing.T) {
		// Ensure a refused post comes back in the board's form, channel and
		// all, so it can be sent again without retyping, and only once.
		c := e.client()
		board := "/game?function=board&tid=" + tid
		resp, _ := c.act(board, url.Values{"function": {"post"}, "body": {"First."}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		body := "Meet me at <the diner> & bring the files."
		page, refusal := c.refused(board, url.Values{"function": {"post"}, "body": {body}, "channel": {"faction"}})
		assert.Contains(t, refusal, "wait")
		assert.Contains(t, page, `aria-describedby="body-hint">Meet me at &lt;the diner&gt; &amp; bring the files.</textarea>`)
		assert.Contains(t, page, `name="channel" value="faction" checked>`)
		_, again := c.get(board)
		assert.Contains(t, again, `aria-describedby="body-hint"></textarea>`, "the kept text shows once")
		e.clock.Add(game.PostCooldown)
	})

	t.Run("ErrPostKeptLongest", func(t *testing.T) {
		// Ensure the longest post, in the widest characters, still fits the
		// flash cookie and comes back whole.
		c := e.client()
		board := "/game?function=board&tid=" + tid
		resp, _ := c.act(board, url.Values{"function": {"post"}, "body": {"First again."}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		body := strings.Repeat("👽", game.MaxPostRunes)
		page, _ := c.refused(board, url.Values{"function": {"post"}, "body": {body}})
		assert.Contains(t, page, `aria-describedby="body-hint">`+body+`</textarea>`)
		e.clock.Add(game.PostCooldown)
	})

	t.Run("ErrPriceMoved", func(t *testing.T) {
		// Ensure the haggle form carries the price the page showed, and an
		// offer sent after someone else's purchase moved it is refused with
		// the new price and odds, changing nothing.
		src := func() game.Source {
			sources, err := e.store.Sources(t.Context())
			require.NoError(t, err)
			return sources[slices.IndexFunc(sources, func(o game.Source) bool { return o.Name == "Late-Night Radio Host" })]
		}
		seen := src()
		_, page := e.client().get("/game?function=sources&tid=" + tid)
		assert.Contains(t, page, `<input type="hidden" name="price" value="`+strconv.Itoa(seen.Price)+`">`)
		_, err := e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Haggle, SourceID: seen.ID, Offer: seen.Price})
		require.NoError(t, err)
		moved := src()
		require.Greater(t, moved.Price, seen.Price)
		before := e.stats(mulder.ID)
		page, refusal := e.client().refused("/game?function=sources&tid="+tid, url.Values{"function": {"haggle"},
			"source": {strconv.FormatInt(seen.ID, 10)}, "offer": {strconv.Itoa(seen.Price)}, "price": {strconv.Itoa(seen.Price)}})
		assert.Contains(t, refusal, fmt.Sprintf("price rose from $%d to $%d since you looked", seen.Price, moved.Price))
		assert.Contains(t, refusal, "no longer a sure deal, it would now have "+game.Percent(game.HaggleOdds(seen.Price, moved.Price))+" odds")
		assert.Contains(t, page, `<input type="hidden" name="price" value="`+strconv.Itoa(moved.Price)+`">`,
			"the page it comes back to offers the new price")
		assert.Equal(t, before, e.stats(mulder.ID))
		assert.Equal(t, moved, src())
	})

	t.Run("ErrTooLarge", func(t *testing.T) {
		// Ensure a form body over the limit is 413 and changes nothing.
		before := e.stats(mulder.ID)
		resp, _ := e.client().post("/game?tid="+tid, url.Values{"function": {"post"}, "body": {strings.Repeat("x", 100<<10)}})
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("ErrNotURLEncoded", func(t *testing.T) {
		// Ensure a form sent as multipart/form-data, or with no
		// Content-Type, is 415 naming what was sent (not a 403 for a
		// token it did carry) and changes nothing.
		before := e.stats(mulder.ID)
		var body strings.Builder
		mw := multipart.NewWriter(&body)
		require.NoError(t, mw.WriteField("function", "post"))
		require.NoError(t, mw.WriteField("body", "hello"))
		require.NoError(t, mw.Close())
		for _, ct := range []string{mw.FormDataContentType(), ""} {
			req := httptest.NewRequest(http.MethodPost, "/game?tid="+tid, strings.NewReader(body.String()))
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			resp, page := e.client().do(req)
			assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, "%q", ct)
			want := "not as multipart/form-data;"
			if ct == "" {
				want = "not as a body without a Content-Type;"
			}
			assert.Contains(t, page, "must be sent as application/x-www-form-urlencoded, "+want)
		}
		assert.Equal(t, before, e.stats(mulder.ID))
	})

	t.Run("EmptyChunkedIsNoBody", func(t *testing.T) {
		// Ensure an empty body of unknown length (chunked) and no
		// Content-Type is answered as Content-Length: 0 is (the form's
		// missing token), not as a body of the wrong type, and that a
		// chunked body that is not empty still gets its 415.
		before := e.stats(mulder.ID)
		send := func(body string, length int64) (*http.Response, string) {
			req := httptest.NewRequest(http.MethodPost, "/game?tid="+tid, io.MultiReader(strings.NewReader(body)))
			req.ContentLength = length
			return e.client().do(req)
		}
		sized, _ := send("", 0)
		chunked, page := send("", -1)
		assert.NotEqual(t, http.StatusUnsupportedMediaType, sized.StatusCode)
		assert.Equal(t, sized.StatusCode, chunked.StatusCode, page)
		typed, page := send("function=post&body=hello", -1)
		assert.Equal(t, http.StatusUnsupportedMediaType, typed.StatusCode)
		assert.Contains(t, page, "not as a body without a Content-Type;")
		assert.Equal(t, before, e.stats(mulder.ID))
	})
}

// tid starts a new session for the player and returns its id.
func (e *env) tid(playerID int64) string {
	e.tb.Helper()
	sess, err := e.store.CreateSession(e.tb.Context(), playerID)
	require.NoError(e.tb, err)
	return sess.ID
}

func TestGamePages_Paged(t *testing.T) {
	e := newEnv(t)
	_, tid := e.player("agent000", game.FBI)
	for i := 1; i < game.PageSize+6; i++ {
		_, err := e.store.Register(t.Context(), fmt.Sprintf("agent%03d", i), "password-agent", game.MIB)
		require.NoError(t, err)
	}
	e.exec(`UPDATE players SET secrets = 100 - id WHERE id <= 50`) // places 1 to 50; the rest joint 51st
	c := e.client()
	t.Run("OK", func(t *testing.T) {
		// Ensure a long list shows one page, with links to the others that carry the tid.
		for _, fn := range []string{"dossiers", "ranking", "news"} {
			resp, page := c.get("/game?function=" + fn + "&tid=" + tid)
			require.Equal(t, http.StatusOK, resp.StatusCode, page)
			assert.Contains(t, page, "<span>Page 1 of 2</span>", fn)
			assert.Contains(t, page, `<a href="/game?function=`+fn+`&amp;page=2&amp;tid=`+tid+`" rel="next">Next</a>`, fn)
			assert.NotContains(t, page, `rel="prev"`, fn)
		}
		_, page := c.get("/game?function=dossiers&tid=" + tid)
		assert.Equal(t, game.PageSize, strings.Count(page, `value="spy"`))
		assert.Contains(t, page, "<caption>55 files, page 1 of 2</caption>")
		_, page = c.get("/game?function=dossiers&page=2&tid=" + tid)
		assert.Equal(t, 5, strings.Count(page, `value="spy"`))
		assert.Contains(t, page, `">agent055</a></strong>`)
		assert.Contains(t, page, `rel="prev"`)
		_, page = c.get("/game?function=ranking&page=2&tid=" + tid)
		assert.Equal(t, 6, strings.Count(page, `<td class="num" data-standing="place">51</td>`), "level players share the place")
		assert.Contains(t, page, `<tbody data-ranking="50">`, "not every player: the script sums no totals from this page")
	})
	t.Run("BackToThePage", func(t *testing.T) {
		// Ensure an order given on page 2 of the dossiers, done or refused,
		// comes back to page 2.
		from := "/game?function=dossiers&page=2&tid=" + tid
		_, page := c.get(from)
		assert.Contains(t, page, `<input type="hidden" name="page" value="2">`)
		_, first := c.get("/game?function=dossiers&tid=" + tid)
		assert.NotContains(t, first, `name="page"`, "page 1 needs no field")
		for _, form := range []url.Values{
			{"function": {"spy"}, "target": {"56"}, "page": {"2"}},
			{"function": {"steal"}, "target": {"56"}, "page": {"2"}}, // refused: agent055 is protected
		} {
			resp, _ := c.act(from, form)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			assert.Equal(t, "/game?function=dossiers&page=2&tid="+tid, location(resp), form)
			c.get(resp.Header.Get("Location")) // takes the flash
		}
	})
	t.Run("OnePage", func(t *testing.T) {
		// Ensure a list that fits one page has no pager.
		_, page := c.get("/game?function=board&tid=" + tid)
		assert.NotContains(t, page, `class="pager"`)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		// Ensure a page that is not a number from 1 is refused, naming it.
		for _, bad := range []string{"0", "-1", "two"} {
			resp, page := c.get("/game?function=ranking&page=" + bad + "&tid=" + tid)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
			assert.Contains(t, page, html.EscapeString(fmt.Sprintf("The page must be a whole number from 1, not %q.", bad)))
		}
	})
}

func TestBoard_FactionChannel(t *testing.T) {
	// Ensure a post on the faction channel shows on its side's board only,
	// marked, while a plain post shows on both.
	e, tid, _, krycek := twoPlayers(t)
	ktid := e.tid(krycek.ID)
	resp, _ := e.client().act("/game?function=board&tid="+tid, url.Values{"function": {"post"}, "body": {"FBI only: meet at the diner."},
		"channel": {"faction"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	e.clock.Add(game.PostCooldown)
	resp, _ = e.client().act("/game?function=board&tid="+tid, url.Values{"function": {"post"}, "body": {"Hello, everyone."}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	_, page := e.client().get("/game?function=board&tid=" + tid)
	assert.Contains(t, page, "FBI only: meet at the diner.")
	assert.Contains(t, page, `<span class="stamp">FBI only</span>`)
	assert.Contains(t, page, `name="channel" value="faction"`)
	_, page = e.client().get("/game?function=board&tid=" + ktid)
	assert.NotContains(t, page, "meet at the diner")
	assert.Contains(t, page, "Hello, everyone.")
}

func TestDossiers_Teammates(t *testing.T) {
	// Ensure a teammate's row offers no spying or stealing, and an
	// opponent's does.
	e, tid, _, krycek := twoPlayers(t)
	scully, _ := e.player("scully", game.FBI)
	_, page := e.client().get("/game?function=dossiers&tid=" + tid)
	assert.Contains(t, page, `<span class="muted">Your side</span>`)
	assert.Contains(t, page, `name="target" value="`+strconv.FormatInt(krycek.ID, 10)+`"`)
	assert.NotContains(t, page, `name="target" value="`+strconv.FormatInt(scully.ID, 10)+`"`)
}

func TestActionFlashWithoutCookies(t *testing.T) {
	// Ensure a player who plays by tid with no cookies at all (the State
	// Secrets URL style) sees an action's outcome and a refusal: the
	// redirect carries the sealed flash, which the page shows, and the
	// page's own links do not carry it on.
	e, tid, _, krycek := twoPlayers(t)
	_, page := e.client().get("/game?function=hq&tid=" + tid)
	form := url.Values{"function": {"rumor"}, "csrf": {csrf(t, page)}}
	resp, _ := e.client().post("/game?tid="+tid, form) // a fresh client each time: no cookie jar carried over
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc := resp.Header.Get("Location")
	require.Contains(t, loc, "&flash=")
	_, page = e.client().get(loc)
	assert.Contains(t, page, `<p class="flash" role="status">`)
	assert.NotContains(t, page, "flash=", "links do not carry the flash")

	// A refusal too (a malformed field).
	form = url.Values{"function": {"spy"}, "target": {"x"}, "csrf": {csrf(t, page)}}
	resp, _ = e.client().post("/game?tid="+tid, form)
	_, page = e.client().get(resp.Header.Get("Location"))
	assert.Contains(t, page, `class="flash error"`)

	// Another session cannot read it.
	sealed := loc[strings.Index(loc, "&flash="):]
	_, other := e.client().get("/game?function=hq&tid=" + e.tid(krycek.ID) + sealed)
	assert.NotContains(t, other, `<p class="flash"`)
}
