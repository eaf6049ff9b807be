package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/internal/browsertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newBrowser starts headless Chromium for a player.
// The timeout leaves room for a busy machine (a load of 30 on 2 cores has
// made the longest take two minutes).
func newBrowser(t *testing.T) context.Context { return browsertest.New(t, 1100, 900, 3*time.Minute) }

// register enlists a new agent through the register form and waits for
// headquarters.
func register(base, name, faction string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/register"),
		chromedp.SendKeys(chromedp.CSS(`#name`), name),
		chromedp.SendKeys(chromedp.CSS(`#password`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`input[name="faction"][value="`+faction+`"]`)),
		chromedp.Click(chromedp.CSS(`form.auth button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.stats`)),
	)
}

// order submits the form that carries function=fn and waits for the outcome.
func order(fn string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		clickFresh(`form:has(input[name="function"][value="`+fn+`"]) button`),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
}

// clickFresh clicks the first element matching the CSS selector, finding
// it again if the page replaced it between the query and the click (a
// live page can reload or swap a part of itself; seen on a busy machine):
// chromedp then fails with "Could not find node with given id" before
// the mouse event is sent, so trying again cannot click twice.
func clickFresh(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var err error
		for try := 0; try < 3; try++ {
			_, err = chromedp.Click(chromedp.CSS(sel))(ctx, tg)
			if err == nil || !strings.Contains(err.Error(), "Could not find node") {
				return err
			}
		}
		return err
	})
}

// text reads the text of the first element matching the CSS selector.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, "text of %s", sel)
	return s
}

func TestBrowserTwoPlayers(t *testing.T) {
	// Ensure a new user can register and play in a real browser, and see
	// another player's actions: two agents enlist, act, one spies on the
	// other, and the ranking and the news show it.
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"))
	alice := newBrowser(t)
	bob, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancel()

	require.NoError(t, chromedp.Do(alice, register(p.base, "alice", "FBI"), order("recruit")))
	aliceHQ := text(t, alice, "main")
	assert.Contains(t, aliceHQ, "You recruited an agent", "alice's wire shows her order")

	require.NoError(t, chromedp.Do(bob,
		register(p.base, "bob", "MIB"),
		chromedp.Navigate(p.base+"/game?function=dossiers"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		order("spy"),
	))
	assert.Contains(t, text(t, bob, ".flash"), "alice", "bob is told how the spying on alice went")

	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=news")))
	news := text(t, alice, "main")
	shot, err := chromedp.Run(alice, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	assert.Regexp(t, `bob joined the MIB`, news, "bob's enlistment is in the news")
	assert.Regexp(t, `went through the files of alice|bob \(MIB\) was caught spying on alice`, news,
		"the spying on alice is in the news alice reads")

	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=ranking")))
	ranking := text(t, alice, "table")
	assert.Contains(t, ranking, "alice")
	assert.Contains(t, ranking, "bob")

	out := filepath.Join(t.ArtifactDir(), "news.png")
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
}

func TestBrowserRoundEnds(t *testing.T) {
	// Ensure a round played in a real browser ends inside the test and
	// every open page hears of it without a reload, through a restart of
	// the server: two agents enlist, alice buys a Secret at the asking
	// price (a sure deal), a refused order comes back on its own page;
	// then alice keeps HQ open (its protection line counting down) and bob
	// the ranking, which gains the row of a third agent who enlists. The
	// server stops: their pages say the connection is
	// lost; it comes back (with a round that ends a few ticks on): the
	// notice goes, alice's page raises an alert that she placed 1st of 3,
	// bob's that he placed joint 2nd (level with the third agent on no
	// Secret), his ranking redraws for round 2; and the
	// hall shows alice on top and the FBI winning. (The round is cut short
	// by the restart's -round rather than played out, so that however slow
	// the machine, the orders come before its end.)
	db := filepath.Join(t.TempDir(), "ss.db")
	p := startProgram(t, "-db", db, "-tick", "1s", "-round", "100000")
	alice := newBrowser(t)
	bob, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancel()

	require.NoError(t, chromedp.Do(bob, register(p.base, "bob", "MIB")))
	require.NoError(t, chromedp.Do(alice,
		register(p.base, "alice", "FBI"),
		chromedp.WaitVisible(chromedp.CSS(`.guide`)), // the first-visit guide
	))
	screenshot(t, alice, "hq-first-visit.png")
	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(p.base+"/game?function=sources"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		order("haggle"),
	))
	assert.Contains(t, text(t, alice, ".flash"), "Secret", "alice is told of her purchase")

	// A refused order: bob stealing from alice, ahead of him but protected
	// as a new player, comes back to the dossiers as a refusal; reloading it
	// sends a GET and shows no more. (alice may not try it on bob: he is not
	// ahead of her, and his row offers no theft; nor may bob while his cash
	// would buy the Secret between them: he spends it on agents first.)
	spendDown(t, bob, p.base)
	require.NoError(t, chromedp.Do(bob,
		chromedp.Navigate(p.base+"/game?function=dossiers"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		chromedp.Click(chromedp.CSS(`form:has(input[name="function"][value="steal"]) button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.error`)),
	))
	assert.Contains(t, text(t, bob, ".flash.error"), "protected")
	screenshot(t, bob, "refused.png")
	assert.Equal(t, "dossiers", strings.ToLower(text(t, bob, "h1")), "the refusal shows on the page the order came from")
	url, err := chromedp.Run(bob, chromedp.Location())
	require.NoError(t, err)
	assert.Contains(t, url, "function=dossiers", "the browser was sent to a GET of the dossiers")
	require.NoError(t, chromedp.Do(bob, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`table`))))
	flashes, err := chromedp.Run(bob, chromedp.Evaluate[int](`document.querySelectorAll(".flash").length`))
	require.NoError(t, err)
	assert.Zero(t, flashes, "a reload shows the refusal no more (and re-sends nothing)")

	// From here on neither page reloads.
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	require.NoError(t, chromedp.Do(bob, chromedp.Navigate(p.base+"/game?function=ranking"), chromedp.WaitVisible(chromedp.CSS(`table`))))
	for _, tab := range []context.Context{alice, bob} {
		eval[bool](t, tab, `window.notReloaded = true`)
	}
	protectionCountsDown(t, alice)

	// A third agent enlists (from another process on the database):
	// bob's open ranking gains her row, in its place, and the FBI's
	// totals count her.
	_, err = besideStore(t, db).Register(context.Background(), "carol", "trust-no-one", game.FBI)
	require.NoError(t, err)
	waitJS(t, bob, `document.querySelector('[data-faction-total="FBI"] [data-total="players"]').textContent === "2"`, 10*time.Second,
		"carol counted in the FBI's total on bob's open ranking")
	// One evaluation reads the whole table: each tick rereads the ranking
	// and puts a new tbody in place, so two separate queries can straddle
	// the swap (chromedp's Text of a row just taken out reads "").
	assert.Equal(t, []string{"1 alice", "2 bob", "2 carol"}, eval[[]string](t, bob,
		`[...document.querySelectorAll("tbody[data-ranking] tr")].map(r =>
			r.querySelector('[data-standing="place"]').textContent + " " + r.dataset.name)`),
		"alice's Secret first, then by name, level players sharing their place")

	addr := strings.TrimPrefix(p.base, "http://")
	tick := eval[int](t, alice, `Number(document.querySelector('[data-live="tick"]').textContent)`)
	require.NoError(t, p.stop())
	// Nobody's cash for the round's last auction to bid (game.LastAuctionCashPercent):
	// the round ends on the Secrets they hold.
	conn, err := sql.Open("sqlite", game.DSN(db))
	require.NoError(t, err)
	_, err = conn.Exec(`UPDATE players SET cash = 0`)
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	lost := `!document.querySelector("[data-live-status]").hidden`
	waitJS(t, alice, lost, 10*time.Second, "the notice that the stream is down")
	assert.Contains(t, text(t, alice, "[data-live-status]"), "reconnecting")
	screenshot(t, alice, "reconnecting.png")
	waitJS(t, bob, lost, 10*time.Second, "the notice on bob's page too")

	// Back, on the same address and database, with a round that ends 5 ticks on.
	p = startProgram(t, "-db", db, "-addr", addr, "-tick", "1s", "-round", strconv.Itoa(tick+5))
	for _, tab := range []context.Context{alice, bob} {
		waitJS(t, tab, `document.querySelector("[data-live-status]").hidden`, 20*time.Second, "the notice going once the stream is back")
	}
	ended := `document.querySelector("[data-live-alert]").textContent.startsWith("Round 1 is over")`
	waitJS(t, alice, ended, 30*time.Second, "the round's end on alice's open HQ")
	assert.Contains(t, text(t, alice, "[data-live-alert]"), "Round 1 is over: you placed 1st of 3, with 1 Secret")
	assert.Contains(t, text(t, alice, `[data-live-list="feed"]`), "you placed 1st of 3", "and on her wire")
	screenshot(t, alice, "round-end-alert.png")
	waitJS(t, bob, ended, 10*time.Second, "the round's end on bob's open ranking")
	assert.Contains(t, text(t, bob, "[data-live-alert]"), "Round 1 is over: you placed joint 2nd of 3")
	waitJS(t, bob, `document.querySelector('tr[data-name="alice"] [data-standing="secrets"]').textContent === "0"`, 10*time.Second,
		"bob's ranking redrawn for the new round")
	assert.Equal(t, "2", text(t, bob, `.stamp [data-live="round"]`), "the ranking says which round")
	screenshot(t, bob, "round-end-ranking.png")
	for _, tab := range []context.Context{alice, bob} {
		assert.True(t, eval[bool](t, tab, `window.notReloaded === true`), "all of it without a reload")
	}

	hall := p.base + "/game?function=hall"
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(hall), chromedp.WaitVisible(chromedp.CSS(`p.winner`))))
	winner := text(t, alice, "p.winner")
	assert.Contains(t, winner, "alice")
	assert.Contains(t, winner, "1 Secret")
	assert.Contains(t, strings.ToLower(text(t, alice, "section.round h2")), "round 1: fbi wins")
	screenshot(t, alice, "hall-of-fame.png")

	// Her name links to her profile, which counts the round won.
	require.NoError(t, chromedp.Do(alice,
		chromedp.Click(chromedp.CSS(`p.winner a`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.stats`)),
	))
	assert.Equal(t, "agent alice", strings.ToLower(text(t, alice, "h1")))
	assert.Contains(t, strings.ToLower(text(t, alice, "dl.stats")), "rounds won\n1")
}

// protectionCountsDown ensures HQ's protection line, open in the tab ctx,
// keeps to the clock as ticks arrive: "until tick N (in M s)" with M the
// ticks left at one second each, or hidden once N is reached (it stayed as
// the page was loaded, and went stale).
func protectionCountsDown(t *testing.T, ctx context.Context) {
	t.Helper()
	type line struct {
		Tick, Until int
		Hidden      bool
		In          string
	}
	read := func() line {
		return eval[line](t, ctx, `(() => { const n = document.querySelector('[data-protection="me"]');
			return {Tick: Number(document.querySelector('[data-live="tick"]').textContent), Until: Number(n.dataset.protectedUntil),
				Hidden: n.hidden, In: n.querySelector('[data-part="in"]').textContent} })()`)
	}
	first := read()
	waitJS(t, ctx, `Number(document.querySelector('[data-live="tick"]').textContent) >= `+strconv.Itoa(first.Tick+2), 20*time.Second,
		"two ticks on HQ")
	now := read()
	if now.Tick >= now.Until {
		assert.True(t, now.Hidden, "protection over at tick %d: the line goes", now.Until)
		return
	}
	assert.False(t, now.Hidden)
	assert.Equal(t, fmt.Sprintf("in %d s", now.Until-now.Tick), now.In, "the countdown at tick %d", now.Tick)
}

// screenshot writes the whole page of the tab ctx to name in the test's
// output folder.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(t.ArtifactDir(), name)
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
}
