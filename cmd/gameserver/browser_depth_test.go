package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBrowserDepth(t *testing.T) {
	// Ensure three players can play a short round with what lasts beyond
	// the first evening: alice gives a batch of rumors (every outcome
	// reported); bob spies on her and reads the report of the dice;
	// alice writes to bob, whose open HQ gets the message live with an
	// unread count, and he answers from the thread; carol, on a phone,
	// recruits in a batch and reads the messages page. The round ends (by
	// a restart with a short -round, as TestBrowserRoundEnds) and the
	// career shows on alice's profile and in the hall of fame. Pages pass
	// axe-core; carol's fit the phone. Screenshots: depth-*.png.
	db := filepath.Join(t.TempDir(), "ss.db")
	p := startProgram(t, "-db", db, "-tick", "1s", "-round", "100000")
	alice := newBrowser(t)
	bob, cancelBob := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancelBob()
	carol, cancelCarol := chromedp.NewContext(alice, chromedp.WithNewBrowserContext())
	defer cancelCarol()
	require.NoError(t, chromedp.Do(carol, chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile)))

	require.NoError(t, chromedp.Do(bob, register(p.base, "bob", "MIB")))
	require.NoError(t, chromedp.Do(carol, register(p.base, "carol", "FBI")))
	require.NoError(t, chromedp.Do(alice, register(p.base, "alice", "FBI")))

	// A batch order: three rumors in one go, each outcome numbered.
	eval[string](t, alice, `document.querySelector('form:has(input[name="function"][value="rumor"]) input[name="count"]').value = "3"`)
	require.NoError(t, chromedp.Do(alice, order("rumor")))
	batch := text(t, alice, ".flash")
	assert.Contains(t, batch, "3 of 3 rumor orders carried out: (1)")
	assert.Contains(t, batch, "(3)")
	screenshot(t, alice, "depth-batch.png")

	// A report: bob spies on alice and reads what decided it.
	require.NoError(t, chromedp.Do(bob,
		chromedp.Navigate(p.base+"/game?function=dossiers"), chromedp.WaitVisible(chromedp.CSS(`table`)),
		order("spy"),
		chromedp.Navigate(p.base+"/game?function=reports"), chromedp.WaitVisible(chromedp.CSS(`tr[data-report]`)),
	))
	report := text(t, bob, `tr[data-report]`)
	assert.Contains(t, report, "spying")
	assert.Contains(t, report, "alice")
	assert.Regexp(t, `\d+ \+ \d = \d+ against security \d+[^=]* \+ \d = \d+`, report, "the dice on both sides")
	assert.Regexp(t, `\d+%`, report, "the odds")
	accessible(t, bob, "reports")
	screenshot(t, bob, "depth-report.png")

	// A message: bob keeps HQ open; alice writes to him.
	require.NoError(t, chromedp.Do(bob, chromedp.Navigate(p.base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	eval[bool](t, bob, `window.notReloaded = true`)
	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(p.base+"/game?function=messages"), chromedp.WaitVisible(chromedp.CSS(`#message-to`)),
		chromedp.SendKeys(chromedp.CSS(`#message-to`), "bob"),
		chromedp.SendKeys(chromedp.CSS(`#message-body`), "Meet me at the fountain."),
		order("message"),
	))
	assert.Contains(t, text(t, alice, ".flash"), "Your message to bob is on its way.")
	assert.Contains(t, text(t, alice, "ol.thread"), "Meet me at the fountain.")
	waitJS(t, bob, `!document.querySelector('[data-unread="messages"]').hidden`, 10*time.Second, "the unread count on bob's open HQ")
	assert.Equal(t, "1", text(t, bob, `[data-unread="messages"] [data-part="n"]`))
	assert.Contains(t, text(t, bob, "[data-live-alert]"), "A private message from alice (FBI): Meet me at the fountain.")
	assert.True(t, eval[bool](t, bob, `window.notReloaded === true`), "delivered without a reload")
	screenshot(t, bob, "depth-message-arrives.png")
	require.NoError(t, chromedp.Do(bob,
		chromedp.Click(chromedp.CSS(`a[data-live-tab="messages"]`)), chromedp.WaitVisible(chromedp.CSS(`ul.feed`)),
		chromedp.Click(chromedp.CSS(`ul.feed a[href*="with=alice"]`)), chromedp.WaitVisible(chromedp.CSS(`ol.thread`)),
		chromedp.SendKeys(chromedp.CSS(`#message-body`), "Not a chance."),
		order("message"),
	))
	assert.Contains(t, text(t, bob, "ol.thread"), "Not a chance.")
	assert.True(t, eval[bool](t, bob, `document.querySelector('[data-unread="messages"]').hidden`), "read: the count went")
	// With the thread open, alice's next message joins it live.
	eval[bool](t, bob, `window.notReloaded = true`)
	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(p.base+"/game?function=messages&with=bob"), chromedp.WaitVisible(chromedp.CSS(`ol.thread`)),
		chromedp.SendKeys(chromedp.CSS(`#message-body`), "Your loss."),
		order("message"),
	))
	waitJS(t, bob, `document.querySelector("ol.thread").textContent.includes("Your loss.")`, 10*time.Second,
		"alice's message in bob's open thread")
	assert.True(t, eval[bool](t, bob, `window.notReloaded === true`), "without a reload")
	waitJS(t, bob, `document.querySelector('[data-unread="messages"]').hidden`, 10*time.Second, "read as it arrived")
	screenshot(t, bob, "depth-thread.png")
	accessible(t, bob, "messages-thread")

	// carol, on a phone: a batch of recruits, then the messages page.
	eval[string](t, carol, `document.querySelector('form:has(input[name="function"][value="recruit"]) input[name="count"]').value = "2"`)
	require.NoError(t, chromedp.Do(carol, order("recruit")))
	assert.Contains(t, text(t, carol, ".flash"), "2 of 2 recruit orders carried out")
	fits(t, carol, "hq after a batch")
	screen(t, carol, "depth-phone-batch.png")
	require.NoError(t, chromedp.Do(carol, chromedp.Navigate(p.base+"/game?function=messages"), chromedp.WaitVisible(chromedp.CSS(`main h1`))))
	fits(t, carol, "messages")
	accessible(t, carol, "messages")
	screen(t, carol, "depth-phone-messages.png")

	// The round ends: back with a round that ends a few ticks on.
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	addr := strings.TrimPrefix(p.base, "http://")
	tick := eval[int](t, alice, `Number(document.querySelector('[data-live="tick"]').textContent)`)
	require.NoError(t, p.stop())
	p = startProgram(t, "-db", db, "-addr", addr, "-tick", "1s", "-round", strconv.Itoa(tick+3))
	waitJS(t, alice, `document.querySelector("[data-live-alert]").textContent.startsWith("Round 1 is over")`, 30*time.Second,
		"the round's end on alice's open HQ")

	// The career outlasts it: on alice's profile, and in the hall of fame.
	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(p.base+"/game?function=profile&name=alice"), chromedp.WaitVisible(chromedp.CSS(`dl.career`)),
	))
	assert.Equal(t, "1", text(t, alice, `[data-career="rounds"]`), "rounds played")
	assert.NotEqual(t, "-", text(t, alice, `[data-career="best"]`), "a best place")
	accessible(t, alice, "profile")
	screenshot(t, alice, "depth-career.png")
	require.NoError(t, chromedp.Do(carol,
		chromedp.Navigate(p.base+"/game?function=profile&name=alice"), chromedp.WaitVisible(chromedp.CSS(`dl.career`)),
	))
	fits(t, carol, "profile")
	screen(t, carol, "depth-phone-career.png")
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=hall"), chromedp.WaitVisible(chromedp.CSS(`main h1`))))
	hall := strings.ToLower(text(t, alice, "main"))
	assert.Contains(t, hall, "careers")
	for _, name := range []string{"alice", "bob", "carol"} {
		assert.Contains(t, hall, name)
	}
	accessible(t, alice, "hall")
	screenshot(t, alice, "depth-hall.png")
}
