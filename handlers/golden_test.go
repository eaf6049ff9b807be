package handlers_test

import (
	"cmp"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// TestGolden renders every page from a game played the same way each
// time (fixed clock, random source and keys) and compares each page with
// testdata/golden/NAME.html. Session ids come from crypto/rand, so they and
// the CSRF tokens derived from them are replaced by placeholders first.
// Run with -update to rewrite the files after an intended change, and read
// the diff.
func TestGolden(t *testing.T) {
	e, tid, _, krycek := twoPlayers(t)
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	play := e.client()
	hq := "/game?function=hq&tid=" + tid
	for _, form := range []url.Values{
		{"function": {"recruit"}},
		{"function": {"rumor"}},
		{"function": {"haggle"}, "source": {strconv.FormatInt(sources[0].ID, 10)}, "offer": {"40"},
			"price": {strconv.Itoa(sources[0].Price)}},
		{"function": {"spy"}, "target": {strconv.FormatInt(krycek.ID, 10)}},
		{"function": {"post"}, "body": {"Trust no one.\n<script>alert(1)</script>"}},
		{"function": {"message"}, "to": {"krycek"}, "body": {"Meet me at <the> fountain."}},
	} {
		resp, body := play.act(hq, form)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	}
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Message, To: "mulder", Body: "Not a chance."})
	require.NoError(t, err)
	replacer := strings.NewReplacer(tid, "TID", tokenOf(t, e, tid), "CSRF-TOKEN")

	pages := []struct {
		name, target string
		status       int
		c            *client
	}{
		{"hq", hq, 200, e.client()},
		{"hq-flash", "", 200, nil},
		{"sources", "/game?function=sources&tid=" + tid, 200, e.client()},
		{"dossiers", "/game?function=dossiers&tid=" + tid, 200, e.client()},
		{"ranking", "/game?function=ranking&tid=" + tid, 200, e.client()},
		{"news", "/game?function=news&tid=" + tid, 200, e.client()},
		{"board", "/game?function=board&tid=" + tid, 200, e.client()},
		{"feed", "/game?function=feed&tid=" + tid, 200, e.client()},
		{"hall", "/game?function=hall&tid=" + tid, 200, e.client()},
		{"profile", "/game?function=profile&name=mulder&tid=" + tid, 200, e.client()},
		{"reports", "/game?function=reports&tid=" + tid, 200, e.client()},
		{"messages", "/game?function=messages&tid=" + tid, 200, e.client()},
		{"messages-thread", "/game?function=messages&with=krycek&tid=" + tid, 200, e.client()},
		{"rules", "/rules", 200, e.client()},
		{"logout", "/logout?tid=" + tid, 200, e.client()},
		{"game-404", "/game?function=bribe&tid=" + tid, 404, e.client()},
		{"404", "/nope", 404, e.client()},
		{"login", "/login", 200, e.client()},
		{"register", "/register", 200, e.client()},
	}
	t.Run("EveryTemplate", func(t *testing.T) {
		// Ensure every page template has a golden page: a new template cannot go untested.
		names, err := filepath.Glob(filepath.Join("..", "assets", "templates", "*.templ"))
		require.NoError(t, err)
		require.NotEmpty(t, names)
		covered := map[string]bool{"layout": true, "parts": true, "error": true} // error: the 404 pages
		for _, p := range pages {
			covered[p.name] = true
		}
		covered["auth"] = covered["login"] && covered["register"] && covered["logout"]
		covered["people"] = covered["feed"] && covered["hall"] && covered["profile"] && covered["rules"]
		for _, name := range names {
			assert.True(t, covered[strings.TrimSuffix(filepath.Base(name), ".templ")], "%s has no golden page", name)
		}
	})
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			var resp *http.Response
			var page string
			if p.name == "hq-flash" {
				resp, _ = play.act(hq, url.Values{"function": {"fortify"}})
				require.Equal(t, http.StatusSeeOther, resp.StatusCode)
				resp, page = play.get(hq)
			} else {
				resp, page = p.c.get(p.target)
			}
			require.Equal(t, p.status, resp.StatusCode)
			golden(t, p.name, replacer.Replace(page))
		})
	}
}

// hashedAsset matches the hash of a content-hashed asset URL
// (assets.Path): "/static/style" and ".1f2e3d4c5b6a7980.".
var hashedAsset = regexp.MustCompile(`(/static/[\w.-]+?)\.[0-9a-f]{16}\.`)

// tokenOf returns the CSRF token the pages of session tid carry.
func tokenOf(tb testing.TB, e *env, tid string) string {
	tb.Helper()
	return csrf(tb, e.mustGet("/game?function=hq&tid="+tid))
}

// golden compares got with testdata/golden/name.html, or writes it there
// with -update. The templ pages come without whitespace between tags, one
// long line, so the files hold them one tag per line (a newline between
// every "><") to keep a diff readable; the page itself has none there.
//
// The hash in each content-hashed asset URL is replaced by HASH, so a
// change to the stylesheet or a script does not change every golden page;
// TestStatic checks those URLs are served.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = hashedAsset.ReplaceAllString(got, "${1}.HASH.")
	got = strings.ReplaceAll(got, "><", ">\n<")
	path := filepath.Join("testdata", "golden", name+".html")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./handlers -run TestGolden -update to create it")
	assert.Equal(t, string(want), got, "%s differs from the golden file; after an intended change run with -update and read the diff", path)
}

func TestGolden_HallOfFame(t *testing.T) {
	// The hall of fame and a profile after a round has ended, from a game
	// played the same way each time: testdata/golden/hall-round.html and
	// profile-round.html (-update rewrites them).
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = 6 })
	mulder, tid := e.player("mulder", game.FBI)
	e.player("krycek", game.MIB)
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	o := slices.MinFunc(sources, func(a, b game.Source) int { return cmp.Compare(a.Price, b.Price) })
	_, err = e.store.Act(t.Context(), mulder.ID, game.Action{Kind: game.Haggle, SourceID: o.ID, Offer: o.Price, Price: o.Price})
	require.NoError(t, err)
	e.clock.Add(6 * 10 * time.Minute)
	_, err = e.store.Tick(t.Context())
	require.NoError(t, err)
	replacer := strings.NewReplacer(tid, "TID", tokenOf(t, e, tid), "CSRF-TOKEN")
	for name, target := range map[string]string{
		"hall-round":    "/game?function=hall&tid=" + tid,
		"profile-round": "/game?function=profile&name=mulder&tid=" + tid,
	} {
		resp, page := e.client().get(target)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		golden(t, name, replacer.Replace(page))
	}
}
