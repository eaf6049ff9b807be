package handlers_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestHallOfFame_RoundEnd(t *testing.T) {
	// Ensure the hall of fame is empty until a round ends, then names the
	// round's winner, winning faction and top ten, linked to profiles,
	// and keeps every past round after the next ends too.
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = 6 })
	mulder, tid := e.player("mulder", game.FBI)
	krycek, _ := e.player("krycek", game.MIB)
	hall := "/game?function=hall&tid=" + tid
	_, page := e.client().get(hall)
	assert.Contains(t, page, "No round has finished yet.")

	// Round 1: mulder buys a Secret at the asking price, for sure.
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	cheap := sources[0]
	for _, o := range sources {
		if o.Price < cheap.Price {
			cheap = o
		}
	}
	_, err = e.store.Act(t.Context(), mulder.ID, game.Action{Kind: game.Haggle, SourceID: cheap.ID, Offer: cheap.Price, Price: cheap.Price})
	require.NoError(t, err)
	e.clock.Add(6 * 10 * time.Minute)
	n, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	require.Equal(t, 6, n)

	resp, page := e.client().get(hall)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, `<h2>Round 1: <span class="badge fbi">FBI</span> wins</h2>`)
	assert.Contains(t, page, `Winner: <a href="/game?function=profile&amp;name=mulder&amp;tid=`+tid+`">mulder</a>`)
	assert.Contains(t, page, "with 1 Secret</p>", "singular")
	assert.Regexp(t, `<td class="num">2</td><td><a href="[^"]*name=krycek[^"]*">krycek</a>`, page, "krycek second")

	// Round 2: krycek's turn; both rounds stay, the latest first.
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Haggle, SourceID: cheap.ID, Offer: cheap.Price, Price: cheap.Price})
	require.NoError(t, err)
	e.clock.Add(6 * 10 * time.Minute)
	_, err = e.store.Tick(t.Context())
	require.NoError(t, err)
	_, page = e.client().get(hall)
	r2 := strings.Index(page, `<h2>Round 2: <span class="badge mib">MIB</span> wins</h2>`)
	r1 := strings.Index(page, `<h2>Round 1: <span class="badge fbi">FBI</span> wins</h2>`)
	require.Positive(t, r2)
	assert.Greater(t, r1, r2, "round 2 above round 1")

	// The news has the summary too.
	_, news := e.client().get("/game?function=news&tid=" + tid)
	assert.Contains(t, news, "Round 1 is over. 1. mulder (FBI) with 1 Secret")

	// The profile counts the round won.
	_, profile := e.client().get("/game?function=profile&name=mulder&tid=" + tid)
	assert.Contains(t, profile, "<dt>Rounds won</dt><dd>1</dd>")
	assert.Contains(t, profile, "Round 2: place 2")
	assert.Contains(t, profile, "Round 1: place 1, with 1 Secret and $")
}

func TestProfile(t *testing.T) {
	// Ensure every name on the ranking and board links to a profile
	// showing faction, joined, place and public posts only; an unknown
	// name is 404 and a missing one 400.
	e, tid, mulder, krycek := twoPlayers(t)
	_, err := e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.PostMessage, Body: "Trust nobody."})
	require.NoError(t, err)
	e.clock.Add(game.PostCooldown)
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.PostMessage, Body: "MIB: the files are ours.", FactionOnly: true})
	require.NoError(t, err)
	link := `href="/game?function=profile&amp;name=krycek&amp;tid=` + tid + `"`
	for _, fn := range []string{"ranking", "board", "dossiers"} {
		_, page := e.client().get("/game?function=" + fn + "&tid=" + tid)
		assert.Contains(t, page, link, fn)
	}
	resp, page := e.client().get("/game?function=profile&name=krycek&tid=" + tid)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "<h1>Agent krycek</h1>")
	assert.Contains(t, page, "With the Men in Black since <time")
	assert.Contains(t, page, "Trust nobody.")
	assert.NotContains(t, page, "the files are ours", "a faction-only post is no public history")
	_ = mulder

	resp, page = e.client().get("/game?function=profile&name=scully&tid=" + tid)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, page, "There is no agent called &#34;scully&#34;")
	resp, _ = e.client().get("/game?function=profile&tid=" + tid)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestFeedPage(t *testing.T) {
	// Ensure the whole wire shows every feed line kept, where HQ shows
	// the latest few.
	e, tid, mulder, _ := twoPlayers(t)
	db, err := sql.Open("sqlite", game.DSN(e.path)) // a second connection, as another process would
	require.NoError(t, err)
	defer db.Close()
	for i := range game.KeepFeed + 10 {
		_, err := db.Exec(`INSERT INTO events (tick, at, player_id, public, text) VALUES (0, ?, ?, 0, ?)`,
			epoch.UnixNano(), mulder.ID, fmt.Sprintf("line %d", i))
		require.NoError(t, err)
	}
	e.clock.Add(10 * time.Minute)
	_, err = e.store.Tick(t.Context()) // prunes the wire to KeepFeed lines
	require.NoError(t, err)
	_, page := e.client().get("/game?function=feed&tid=" + tid)
	lines := regexp.MustCompile(`<li><time`).FindAllStringIndex(page, -1)
	assert.Len(t, lines, game.KeepFeed)
	_, hq := e.client().get("/game?function=hq&tid=" + tid)
	assert.Less(t, len(regexp.MustCompile(`<li><time`).FindAllStringIndex(hq, -1)), game.KeepFeed)
	assert.Contains(t, hq, `href="/game?function=feed&amp;tid=`+tid+`">Your whole wire</a>`)
}

func TestRulesPage(t *testing.T) {
	// Ensure the rules are one click from every page, logged in or not,
	// rendered from RULES.md with its tables.
	e, tid, _, _ := twoPlayers(t)
	for _, target := range []string{"/login", "/register", "/game?function=hq&tid=" + tid, "/game?function=hall&tid=" + tid} {
		_, page := e.client().get(target)
		assert.Regexp(t, `<a href="/rules(\?tid=[0-9a-f]+)?"`, page, target)
	}
	resp, page := e.client().get("/rules")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, `<h1 id="state-secrets-the-rules">State Secrets: the rules</h1>`)
	assert.Contains(t, page, "<td>recruit</td>")
	assert.NotContains(t, page, `class="agent"`, "logged out: no agent in the masthead")
	_, page = e.client().get("/rules?tid=" + tid)
	assert.Contains(t, page, "Agent <strong>mulder</strong>", "logged in: the game's nav")
}

func TestFirstVisitGuide(t *testing.T) {
	// Ensure HQ offers three first orders until the player gives one.
	e, tid, _, _ := twoPlayers(t)
	hq := "/game?function=hq&tid=" + tid
	_, page := e.client().get(hq)
	assert.Contains(t, page, "Your first orders")
	assert.Equal(t, 3, strings.Count(page[strings.Index(page, "Your first orders"):strings.Index(page, "</ol>")], "<li>"))
	resp, _ := e.client().act(hq, url.Values{"function": {"rumor"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = e.client().get(hq)
	assert.NotContains(t, page, "Your first orders")
}

func TestStealWarnsOfProtection(t *testing.T) {
	// Ensure the Steal button says it ends the thief's protection while
	// they have it, and says nothing once it has run out.
	e, tid, mulder, krycek := twoPlayers(t)
	e.exec(`UPDATE players SET secrets = 1 WHERE id = ?`, krycek.ID)                  // ahead: one to rob
	broke := func() { e.exec(`UPDATE players SET cash = 0 WHERE id = ?`, mulder.ID) } // cash that would buy the gap rules a theft out
	broke()
	dossiers := "/game?function=dossiers&tid=" + tid
	_, page := e.client().get(dossiers)
	assert.Regexp(t, `Steal <span class="unit">\d+%, ends your protection</span>`, page)
	e.clock.Add(game.NewPlayerProtection * 10 * time.Minute)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	broke()
	_, page = e.client().get(dossiers)
	assert.Regexp(t, `Steal <span class="unit">\d+%</span></button>`, page)
	assert.NotContains(t, page, "ends your protection")
}

func TestDossiers_RedactedReadsUnknown(t *testing.T) {
	// Ensure a blacked-out cell is hidden from screen readers and reads
	// "unknown" instead of its placeholder digits.
	e, tid, _, _ := twoPlayers(t)
	_, page := e.client().get("/game?function=dossiers&tid=" + tid)
	assert.Equal(t, 4, strings.Count(page, `<span class="redacted" aria-hidden="true">`))
	assert.Equal(t, 4, strings.Count(page, `<span class="vh">unknown</span>`))
}

func TestDossiers_StealOnlyFromPlayersAhead(t *testing.T) {
	// Ensure the dossiers show every rival's Secrets (public, as on the
	// ranking) with no file on them, and offer a theft only from a rival
	// ahead of the player, saying why not otherwise: the play trial's
	// raider saw a Steal button on rivals level or behind, and the order
	// was refused.
	e, tid, mulder, krycek := twoPlayers(t)
	dossiers := "/game?function=dossiers&tid=" + tid
	_, page := e.client().get(dossiers)
	assert.Contains(t, page, `<td class="num" data-label="Secrets">0</td>`)
	assert.Contains(t, page, "No theft: krycek holds 0 Secrets, not more than your 0.")
	assert.NotContains(t, page, `value="steal"`)
	assert.Contains(t, page, `value="spy"`)

	e.exec(`UPDATE players SET secrets = 2 WHERE id = ?`, krycek.ID)
	_, page = e.client().get(dossiers)
	assert.Contains(t, page, `<td class="num" data-label="Secrets">2</td>`)
	assert.Contains(t, page, `value="steal"`)
	assert.NotContains(t, page, "No theft")

	e.exec(`UPDATE players SET secrets = 2 WHERE id = ?`, mulder.ID) // level: no theft
	_, page = e.client().get(dossiers)
	assert.Contains(t, page, "No theft: krycek holds 2 Secrets, not more than your 2.")
	assert.NotContains(t, page, `value="steal"`)
	e.clock.Add(game.NewPlayerProtection * 10 * time.Minute) // krycek's protection as a new player runs out
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	_, refusal := e.client().refused(dossiers, url.Values{"function": {"steal"}, "target": {strconv.FormatInt(krycek.ID, 10)}})
	assert.Contains(t, refusal, "you may only steal from players holding more than your 2")
}

func TestPaging_EverythingKept(t *testing.T) {
	// Ensure the news and the board page back through everything the tick
	// keeps (game.KeepNews lines, game.KeepPosts posts), as RULES.md says:
	// the last page ends with the oldest line kept, and nothing older.
	e, tid, mulder, _ := twoPlayers(t)
	db, err := sql.Open("sqlite", game.DSN(e.path)) // a second connection, as another process would
	require.NoError(t, err)
	defer db.Close()
	const extra = 30
	for i := range game.KeepNews + extra {
		_, err := db.Exec(`INSERT INTO events (tick, at, player_id, public, text) VALUES (0, ?, NULL, 1, ?)`,
			epoch.UnixNano(), fmt.Sprintf("news line %03d.", i))
		require.NoError(t, err)
	}
	for i := range game.KeepPosts + extra {
		_, err := db.Exec(`INSERT INTO posts (player_id, body, at) VALUES (?, ?, ?)`, mulder.ID, fmt.Sprintf("post %03d.", i), epoch.UnixNano())
		require.NoError(t, err)
	}
	e.clock.Add(10 * time.Minute)
	_, err = e.store.Tick(t.Context()) // prunes to what is kept
	require.NoError(t, err)

	for _, tc := range []struct {
		function, oldest, gone string
		kept                   int
	}{
		// The tick's own lines are newer than these, so the oldest kept
		// inserted line is the one after the extra ones, give or take them.
		{"news", "news line", "news line 000.", game.KeepNews},
		{"board", "post", "post 000.", game.KeepPosts},
	} {
		pages := (tc.kept + game.PageSize - 1) / game.PageSize
		_, page := e.client().get("/game?function=" + tc.function + "&tid=" + tid)
		assert.Contains(t, page, fmt.Sprintf("<span>Page 1 of %d</span>", pages), tc.function)
		_, last := e.client().get(fmt.Sprintf("/game?function=%s&page=%d&tid=%s", tc.function, pages, tid))
		assert.Contains(t, last, fmt.Sprintf("<span>Page %d of %d</span>", pages, pages), tc.function)
		assert.Contains(t, last, tc.oldest, tc.function)
		assert.NotContains(t, last, tc.gone, "%s: pruned by the tick", tc.function)
		_, past := e.client().get(fmt.Sprintf("/game?function=%s&page=%d&tid=%s", tc.function, pages+3, tid))
		assert.Contains(t, past, fmt.Sprintf("<span>Page %d of %d</span>", pages, pages), "%s: past the last is the last", tc.function)
	}
}
