package main

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitJS waits, up to within, until the JavaScript expression is true on
// the page of tab ctx.
func waitJS(t *testing.T, ctx context.Context, expr string, within time.Duration, why string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(within)))
	require.NoError(t, err, "waiting for %s (%s)", why, expr)
}

// eval evaluates the JavaScript expression on the page of tab ctx.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluate %s", expr)
	return v
}

// click clicks the button in sel, an order's form, and waits for the page
// its outcome comes back on (the flash of the page before is removed
// first, so that it cannot pass for the new one).
func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".flash").forEach(f => f.remove())`),
		chromedp.Click(chromedp.CSS(sel+` button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
}

// sourceRow returns the CSS selector of the Sources page's row for the
// source called name.
func sourceRow(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	id := eval[string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll("tr[data-source]")].find(r => r.textContent.includes(%q)).dataset.source`, name))
	return `tr[data-source="` + id + `"]`
}

// haggleLive plays, on alice's Sources page left open, what went wrong in
// play: another player's purchase moves a price while the page is open.
// Ensure the offer box follows the price (it kept the old one, and a sure
// buy became a gamble), the row's highlight plays at every change (only at
// the first, before) and its heat updates (it never did); and an offer
// typed before the price fell (a tick's drift) goes through rather than
// being refused as "moved". bob (another tab) spends $220 and 4 AP.
func haggleLive(t *testing.T, base string, alice, bob context.Context) {
	t.Helper()
	sources := base + "/game?function=sources"
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(sources), chromedp.WaitVisible(chromedp.CSS(`table`))))
	require.NoError(t, chromedp.Do(bob, chromedp.Navigate(sources), chromedp.WaitVisible(chromedp.CSS(`table`))))
	radio, farmer := sourceRow(t, alice, "Late-Night Radio Host"), sourceRow(t, alice, "Crop Circle Farmer")
	// form reads a row's asking price, offer and the price its form says
	// the player saw, at one moment (a tick may change them any second).
	form := func(row string) [3]string {
		t.Helper()
		return eval[[3]string](t, alice, `(() => { const r = document.querySelector('`+row+`');
			return [r.querySelector('[data-live="price"]').textContent.slice(1), r.querySelector('input[name="offer"]').value,
				r.querySelector('input[name="price"]').value] })()`)
	}
	before := form(radio)
	require.Equal(t, before[0], before[1], "the offer box starts at the asking price")

	// bob buys from the radio host at the asking price: its price rises.
	require.NoError(t, chromedp.Do(bob, click(radio)))
	require.Contains(t, text(t, bob, ".flash"), "whispered a Secret")
	waitJS(t, alice, `document.querySelector('`+radio+` [data-live="price"]').textContent !== "$`+before[0]+`"`, 10*time.Second,
		"the radio host's new price on alice's page")
	now := form(radio)
	assert.Greater(t, atoi(t, now[0]), atoi(t, before[0]))
	assert.Equal(t, now[0], now[1], "the offer box follows the price: a sure buy stays one")
	assert.Equal(t, now[0], now[2], "and so does the price the form says alice saw")
	screenshot(t, alice, "live-sources.png")
	affords(t, alice, now[0], "alice")
	require.NoError(t, chromedp.Do(alice, click(radio)))
	assert.Contains(t, text(t, alice, ".flash"), "whispered a Secret", "alice's buy at the new asking price is a sure deal")

	// Watch the farmer's row on the page alice's order came back to: its
	// highlights and every heat it shows.
	eval[bool](t, alice, `(() => {
		const row = document.querySelector('`+farmer+`');
		window.notReloaded = true; window.highlights = 0; window.heats = [];
		row.addEventListener("animationstart", () => window.highlights++);
		const heat = row.querySelector('[data-live="heat"]');
		new MutationObserver(() => window.heats.push(heat.textContent)).observe(heat, {childList: true, subtree: true, characterData: true});
		return true;
	})()`)
	affords(t, bob, form(farmer)[0], "bob")
	base0 := form(farmer)[0]
	require.NoError(t, chromedp.Do(bob, click(farmer)))
	require.Contains(t, text(t, bob, ".flash"), "whispered a Secret")
	waitJS(t, alice, `document.querySelector('`+farmer+` [data-live="price"]').textContent !== "$`+base0+`"`, 10*time.Second,
		"the farmer's risen price on alice's page")

	// alice types an offer at the risen price; a tick drifts it down before she sends it.
	eval[string](t, alice, `document.querySelector('`+farmer+` input[name="offer"]').value = ""`)
	require.NoError(t, chromedp.Do(alice, chromedp.SendKeys(chromedp.CSS(farmer+` input[name="offer"]`), "60")))
	typed := form(farmer)
	require.Equal(t, "60", typed[1])
	waitJS(t, alice, `document.querySelector('`+farmer+` [data-live="price"]').textContent !== "$`+typed[2]+`"`, 10*time.Second,
		"a tick drifting the farmer's price down")
	fell := form(farmer)
	assert.Less(t, atoi(t, fell[0]), atoi(t, typed[2]), "the price fell")
	assert.Equal(t, [2]string{"60", typed[2]}, [2]string{fell[1], fell[2]}, "a typed offer keeps the price it was typed against")
	waitJS(t, alice, `window.highlights >= 2`, 5*time.Second, "the farmer's row lighting up at each change (bob's purchase, the drift)")
	heats := eval[[]string](t, alice, `window.heats`)
	require.True(t, eval[bool](t, alice, `window.notReloaded === true`), "all of it without a reload")
	require.NoError(t, chromedp.Do(alice, click(farmer)))
	assert.Zero(t, eval[int](t, alice, `document.querySelectorAll(".flash.error").length`),
		"a price that fell is not refused as moved: %s", text(t, alice, ".flash"))
	assert.Regexp(t, `took your \$60|pocketed \$\d+ of your \$60|laughed at your \$60 and kept \$\d+`, text(t, alice, ".flash"))
	// The farmer's heat reached the page live. Which values it showed
	// depends on the clock: a source's state is coalesced (latest wins,
	// handlers.LiveStateInterval), so when a 1 s tick cools bob's 5%
	// within the same interval, the page goes straight to the cooled
	// heat (seen at a load average of 30).
	assert.NotEmpty(t, heats, "the farmer's heat changed live")
	t.Logf("heats shown live: %q", heats)
}

// affords waits until the masthead of the player's open page shows the
// cash for price (pay comes every game.PayTicks ticks): a newcomer's cash
// buys one Secret, not two.
func affords(t *testing.T, ctx context.Context, price, who string) {
	t.Helper()
	waitJS(t, ctx, `Number(document.querySelector('[data-live="cash"]').textContent) >= `+price, 2*time.Minute,
		who+"'s pay covering $"+price)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// spendDown has the player of tab ctx recruit agents on HQ with their
// cash until what is left ($0 to $99) would not buy a Secret: a thief
// may not rob while their cash would buy the gap (game.CanStealFrom), and
// a Dossiers row then offers no theft.
func spendDown(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	const cash = `Number(document.querySelector('[data-live="cash"]').textContent)`
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	if n := eval[int](t, ctx, cash) / game.RecruitCost; n > 0 {
		recruit := `form:has(input[name="function"][value="recruit"])`
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(recruit+` input[name="count"]`), strconv.Itoa(n)), click(recruit)))
	}
	require.Less(t, eval[int](t, ctx, cash), game.RecruitCost, "the cash spent on agents")
}
