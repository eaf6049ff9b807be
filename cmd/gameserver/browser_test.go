package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/statesecrets/server/internal/browsertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newBrowser starts headless Chromium for a player.
func newBrowser(t *testing.T) context.Context { return browsertest.New(t, 1100, 900, 2*time.Minute) }

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
		chromedp.Click(chromedp.CSS(`form:has(input[name="function"][value="`+fn+`"]) button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
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
	// Ensure a round played in a real browser ends inside the test and the
	// hall of fame names its winner: two agents enlist in a round of 20
	// one-second ticks, alice buys a Secret at the asking price (a sure
	// deal), a refused order comes back on its own page, and once the
	// round is over the hall shows alice on top and the FBI winning.
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"), "-tick", "1s", "-round", "20")
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

	// A refused order: stealing from bob, who is protected, comes back to
	// the dossiers as a refusal; reloading it sends a GET and shows no more.
	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(p.base+"/game?function=dossiers"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		chromedp.Click(chromedp.CSS(`form:has(input[name="function"][value="steal"]) button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.error`)),
	))
	assert.Contains(t, text(t, alice, ".flash.error"), "protected")
	screenshot(t, alice, "refused.png")
	assert.Equal(t, "dossiers", strings.ToLower(text(t, alice, "h1")), "the refusal shows on the page the order came from")
	url, err := chromedp.Run(alice, chromedp.Location())
	require.NoError(t, err)
	assert.Contains(t, url, "function=dossiers", "the browser was sent to a GET of the dossiers")
	require.NoError(t, chromedp.Do(alice, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`table`))))
	flashes, err := chromedp.Run(alice, chromedp.Evaluate[int](`document.querySelectorAll(".flash").length`))
	require.NoError(t, err)
	assert.Zero(t, flashes, "a reload shows the refusal no more (and re-sends nothing)")

	// The round ends 20 s after the game began; poll the hall until it does.
	hall := p.base + "/game?function=hall"
	deadline := time.Now().Add(60 * time.Second)
	var winner string
	for time.Now().Before(deadline) {
		require.NoError(t, chromedp.Do(alice, chromedp.Navigate(hall), chromedp.WaitVisible(chromedp.CSS(`main h1`))))
		n, err := chromedp.Run(alice, chromedp.Evaluate[int](`document.querySelectorAll("p.winner").length`))
		require.NoError(t, err)
		if n > 0 {
			winner = text(t, alice, "p.winner")
			break
		}
		time.Sleep(time.Second)
	}
	require.NotEmpty(t, winner, "the round ended within a minute")
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
