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

// A phone's screen, in CSS pixels: 390 x 844 (an iPhone 12 to 15).
const phoneWidth, phoneHeight = 390, 844

// mastheadMax is the most of a phone's height the masthead may take: an
// eighth. At 199 px (a quarter) it pushed the page's own heading down.
const mastheadMax = phoneHeight / 8

// newPhone starts headless Chromium for a player, emulating a phone.
func newPhone(t *testing.T) context.Context {
	t.Helper()
	// A deadline for a busy machine: axe-core took up to 37 s a page at a
	// load of 30 on 2 cores; the whole test took 35 s at a load of 26).
	ctx := browsertest.New(t, phoneWidth, phoneHeight, 6*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile)))
	return ctx
}

// fits ensures the page open in the tab ctx fits the phone's width: the
// document does not scroll sideways, no ledger does, and no control (a
// button, a link, a field) reaches past the screen's edge (the Dossiers
// Steal button ran 5 px past it).
func fits(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	type layout struct {
		Width, Masthead float64
		Wide            []string
	}
	got := eval[layout](t, ctx, `(() => {
		const wide = [];
		if (document.documentElement.scrollWidth > innerWidth) { wide.push("the document: " + document.documentElement.scrollWidth + " px"); }
		document.querySelectorAll(".scroll").forEach(s => { if (s.scrollWidth > s.clientWidth) { wide.push("a ledger: " + s.scrollWidth + " px"); } });
		document.querySelectorAll("a, button, input, select, textarea").forEach(e => {
			const r = e.getBoundingClientRect();
			if (r.width > 0 && !e.classList.contains("skip") && (r.left < 0 || r.right > innerWidth + 0.5)) {
				wide.push(e.outerHTML.slice(0, 60) + ": " + r.left.toFixed(1) + " to " + r.right.toFixed(1) + " px");
			}
		});
		const m = document.querySelector(".masthead");
		return {Width: innerWidth, Masthead: m ? m.getBoundingClientRect().height : 0, Wide: wide};
	})()`)
	assert.Equal(t, float64(phoneWidth), got.Width, "%s: the viewport grew past the phone's width to fit the page", page)
	assert.Empty(t, got.Wide, "%s: past the screen's %d px", page, phoneWidth)
	assert.LessOrEqual(t, got.Masthead, float64(mastheadMax), "%s: the masthead's height, of the screen's %d px", page, phoneHeight)
}

// accessible ensures the page open in the tab ctx breaks none of
// axe-core's rules (browsertest.Axe): among them heading-order (two pages
// went from h1 to h3) and color-contrast.
func accessible(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	for _, v := range browsertest.Axe(t, ctx) {
		assert.Fail(t, "axe-core: "+page, "%s", v)
	}
}

func TestBrowserPhone(t *testing.T) {
	// Ensure every page, logged out and in on either side, fits a phone's
	// screen, with a screenshot of each as the phone shows it
	// (phone-NAME.png in the test's artifacts), and that every template
	// passes axe-core (not the pages made of the same parts again: axe
	// takes seconds a page on a busy machine).
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"))
	alice := newPhone(t)
	bob, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancel()
	require.NoError(t, chromedp.Do(bob, chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile)))
	// Pages axe-core need not see: made of parts it saw elsewhere (register's
	// form, HQ's wire), or, the rules, long Markdown whose only finding was
	// the odds table running off the paper, which fits finds too.
	again := map[string]bool{"login": true, "news": true, "feed": true, "rules": true}
	check := func(ctx context.Context, name, target string) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(p.base+target), chromedp.WaitVisible(chromedp.CSS(`main h1`))))
		fits(t, ctx, name)
		if !again[name] {
			accessible(t, ctx, name)
		}
		screen(t, ctx, "phone-"+name+".png")
	}

	for _, page := range []string{"front", "login", "register", "rules"} {
		check(bob, page, "/"+strings.TrimPrefix(page, "front"))
	}
	require.NoError(t, chromedp.Do(bob, register(p.base, "bob", "MIB")))
	require.NoError(t, chromedp.Do(alice, register(p.base, "alice", "FBI"), order("recruit")))
	for _, fn := range []string{"hq", "sources", "dossiers", "ranking", "news", "board", "feed", "hall", "profile&name=bob"} {
		check(alice, strings.TrimSuffix(fn, "&name=bob"), "/game?function="+fn)
	}
	check(bob, "hq-mib", "/game?function=hq") // the other side's colours
}

// screen writes what the tab ctx shows on its screen (not the whole page:
// a phone's is long, and costly to capture) to name in the test's output
// folder.
func screen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	out := filepath.Join(t.ArtifactDir(), name)
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)
}
