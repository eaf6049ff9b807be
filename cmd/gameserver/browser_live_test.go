package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBrowserLivePages(t *testing.T) {
	// Ensure an open page updates itself over the event stream: while
	// alice's headquarters stays open, bob spies on her; the line appears in
	// her feed with an alert and the News tab counts an unseen line, without
	// a reload; and the ticks change the clock and her figures in place.
	// Then, on the Sources page, prices moved by another player (haggleLive).
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"), "-tick", "1s")
	alice := newBrowser(t)
	bob, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancel()

	require.NoError(t, chromedp.Do(alice, register(p.base, "alice", "FBI")))
	tick0 := text(t, alice, `[data-live="tick"]`)
	ap0 := text(t, alice, `dl.stats [data-live="ap"]`)
	// Mark the document: a reload would lose the mark.
	_, err := chromedp.Run(alice, chromedp.Evaluate[bool](`window.notReloaded = true`))
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(bob,
		register(p.base, "bob", "MIB"),
		chromedp.Navigate(p.base+"/game?function=dossiers"),
		chromedp.WaitVisible(chromedp.CSS(`table`)),
		order("spy"),
	))

	wait := func(sel string) {
		t.Helper()
		require.NoError(t, chromedp.Do(alice, chromedp.WaitVisible(chromedp.CSS(sel))), "waiting for %s", sel)
	}
	wait(`[data-live-list="feed"] li.live-new`)
	assert.Regexp(t, `Someone went through your files|bob \(MIB\) was caught spying on you`,
		text(t, alice, `[data-live-list="feed"] li.live-new`))
	wait(`[data-live-alert]`)
	wait(`[data-live-tab="news"] .unseen`)
	assert.Equal(t, "2", text(t, alice, `[data-live-tab="news"] .unseen`), "two unseen news lines: bob joined, and the spying")

	// Ticks: the clock moves and, within a payday, the figures too.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (text(t, alice, `[data-live="tick"]`) == tick0 ||
		text(t, alice, `dl.stats [data-live="ap"]`) == ap0) {
		time.Sleep(200 * time.Millisecond)
	}
	assert.NotEqual(t, tick0, text(t, alice, `[data-live="tick"]`), "the tick number changed in place")
	assert.NotEqual(t, ap0, text(t, alice, `dl.stats [data-live="ap"]`), "AP changed in place")
	notReloaded, err := chromedp.Run(alice, chromedp.Evaluate[bool](`window.notReloaded === true`))
	require.NoError(t, err)
	assert.True(t, notReloaded, "all of it without a reload")

	shot, err := chromedp.Run(alice, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	out := filepath.Join(t.ArtifactDir(), "live-hq.png")
	require.NoError(t, os.WriteFile(out, shot, 0o644))
	t.Logf("screenshot: %s", out)

	haggleLive(t, p.base, alice, bob)
}
