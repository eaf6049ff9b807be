package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTicks and roundTick are the short round TestBrowserRoundOdds plays:
// 240 ticks of half a second, 120 s, of which a newcomer's protection
// (game.NewPlayerProtection, 36 ticks) takes the first 18 s, leaving 102 s
// to case bob's place, steal and read the report before the round ends.
// Fewer were too few on a busy machine: at 90 ticks (27 s left) at a load
// average of 11, and at 120 ticks (42 s) beside three busy loops and a
// second make test, the steal came after the round's end had taken bob's
// Secret.
// A tick of half a second keeps the casing's window (game.CaseTicks, 6
// ticks) at 3 s, wide enough for a busy machine. The two table sizes
// play at once, each on a server and a browser of its own: the test
// takes about one round, not two.
const (
	roundTicks = 240
	roundTick  = 500 * time.Millisecond
)

func TestBrowserRoundOdds(t *testing.T) {
	// Ensure a round plays through the real pages with two and with three
	// players, and that the odds the Steal button shows before a theft are
	// the odds its report gives: bob (MIB) buys a Secret; alice (FBI) sets
	// a trap and bids at the broker; once bob's protection is over, the
	// FBI cases his place (alice spies, or with three players her teammate
	// carol does, whose file is alice's too), alice reads the Steal
	// button's odds and why, steals, and finds the same odds on her
	// Reports page; the round ends on the open pages, the broker having
	// answered alice's bid; the hall of fame, careers and all, fits a
	// phone (at three players). Screenshots of the pages at desktop size are
	// kept (round-N-PAGE.png), and of the hall on the phone.
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d players", n), func(t *testing.T) {
			t.Parallel()
			playOddsRound(t, n)
		})
	}
}

func playOddsRound(t *testing.T, n int) {
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"), "-tick", roundTick.String(), "-round", fmt.Sprint(roundTicks))
	alice := newBrowser(t)
	bob, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext()) // separate cookies
	defer cancel()
	caser := alice // who cases bob's place for alice
	require.NoError(t, chromedp.Do(bob, register(p.base, "bob", "MIB")))
	require.NoError(t, chromedp.Do(alice, register(p.base, "alice", "FBI")))
	if n == 3 {
		carol, cancel := chromedp.NewContext(alice, chromedp.WithNewBrowserContext())
		defer cancel()
		require.NoError(t, chromedp.Do(carol, register(p.base, "carol", "FBI")))
		caser = carol
	}
	shot := func(ctx context.Context, page string) { screenshot(t, ctx, fmt.Sprintf("round-%d-%s.png", n, page)) }

	// bob buys the cheapest Secret, at its asking price: a sure deal.
	require.NoError(t, chromedp.Do(bob, chromedp.Navigate(p.base+"/game?function=sources"), chromedp.WaitVisible(chromedp.CSS(`table`))))
	require.NoError(t, chromedp.Do(bob, click(`tbody tr:first-child form`)))
	assert.Contains(t, text(t, bob, ".flash"), "whispered a Secret")

	// alice sets a trap.
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	require.NoError(t, chromedp.Do(alice, click(`form:has(input[name="function"][value="trap"])`)))
	assert.Contains(t, text(t, alice, ".flash"), "You set a trap")
	shot(alice, "hq")

	// Once bob's protection is over, the FBI cases his place.
	bobRow := `[...document.querySelectorAll("tr[data-player]")].find(r => r.textContent.includes("bob"))`
	require.NoError(t, chromedp.Do(caser, chromedp.Navigate(p.base+"/game?function=dossiers"), chromedp.WaitVisible(chromedp.CSS(`table`))))
	waitJS(t, caser, `!`+bobRow+`.querySelector(".protected")`, time.Minute, "bob's protection to run out")
	// bob watches the ranking while alice steals from him: his row follows
	// the theft live, and no tick reads the page again (it did at every one).
	require.NoError(t, chromedp.Do(bob, chromedp.Navigate(p.base+"/game?function=ranking"), chromedp.WaitVisible(chromedp.CSS(`table`))))
	// A file cases the place for game.CaseTicks ticks (3 s here): alice
	// steals right after the casing and her spending down (a thief whose
	// cash would buy the gap may not rob), with at least 3 ticks of the
	// file left, or the place is cased again: on a loaded machine the
	// pages between can outlast the file, and the theft would go in blind
	// at other odds than those shown (as it should). The screenshot is
	// taken after the theft.
	var why string
	for try := 1; ; try++ {
		caseBob(t, caser, bobRow)
		spendDown(t, alice, p.base)
		require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=dossiers"), chromedp.WaitVisible(chromedp.CSS(`table`))))
		why = eval[string](t, alice, bobRow+`.querySelector("p.odds").textContent`)
		if age, fresh := fileAge(why); fresh && age <= game.CaseTicks-3 || try == 5 {
			break
		}
		t.Logf("try %d: bob's file is too old to steal on (%q): casing again", try, why)
	}
	assert.Contains(t, why, "fresh enough to case the place", "the file cases the place: no blind, no trap")
	shown := eval[string](t, alice, bobRow+`.querySelector('form:has(input[value="steal"]) button').dataset.odds`)
	assert.Contains(t, eval[string](t, alice, bobRow+`.querySelector('form:has(input[value="steal"]) button').textContent`), shown,
		"the odds are on the button")
	id := eval[string](t, alice, bobRow+`.dataset.player`)
	require.NoError(t, chromedp.Do(alice, click(`tr[data-player="`+id+`"] form:has(input[value="steal"])`)))
	shot(alice, "dossiers")
	assert.Contains(t, text(t, alice, ".flash"), "The odds were "+shown)

	if eval[bool](t, alice, `document.querySelector(".flash").textContent.includes("stole a Secret")`) {
		waitJS(t, bob, `document.querySelector('tr[data-name="bob"] [data-standing="secrets"]').textContent === "0"`, 20*time.Second,
			"the theft on bob's open ranking")
	}
	time.Sleep(4 * roundTick) // a few ticks go by
	assert.Zero(t, eval[int](t, bob, `performance.getEntriesByType("resource").filter(e => e.name.includes("function=ranking")).length`),
		"the open ranking read the page again at a tick")

	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=reports"), chromedp.WaitVisible(chromedp.CSS(`table`))))
	assert.Equal(t, "theft", text(t, alice, `tr[data-report] td strong`), "the newest report is the theft")
	assert.Equal(t, shown, text(t, alice, `tr[data-report] td[data-label="Odds"]`), "the odds shown before the steal are its report's")
	shot(alice, "reports")

	// alice bids at the broker's auction once pay has brought her the
	// minimum (after the theft: a bid's cash counts as the thief's).
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=sources"), chromedp.WaitVisible(chromedp.CSS(`.broker`))))
	waitJS(t, alice, fmt.Sprintf(`Number(document.querySelector('[data-live="cash"]').textContent) >= %d`, game.AuctionMinBid), time.Minute,
		"pay for alice's bid")
	require.NoError(t, chromedp.Do(alice, chromedp.SetValue(chromedp.CSS(`#bid`), "200"), click(`.broker form:has(input[name="function"][value="bid"])`)))
	assert.Contains(t, text(t, alice, ".flash"), "Your sealed bid of $200 is with the broker")
	shot(alice, "sources")

	// The round ends on the open pages, after the broker's last auction.
	require.NoError(t, chromedp.Do(alice, chromedp.Navigate(p.base+"/game?function=hq"), chromedp.WaitVisible(chromedp.CSS(`dl.stats`))))
	assert.Contains(t, text(t, alice, "main"), "Your trap is set.")
	waitJS(t, alice, `document.querySelector("[data-live-alert]").textContent.startsWith("Round 1 is over")`, 3*time.Minute,
		"the round's end on alice's open HQ")
	// The reset clears the trap, and the open HQ says so (it kept saying
	// "Your trap is set.": the stream updated only the figures).
	waitJS(t, alice, `document.querySelector("main").textContent.includes("You have no trap set.")`, 30*time.Second,
		"the round's reset on alice's open HQ")
	assert.True(t, eval[bool](t, alice, `!document.querySelector("[data-live-alert]").hidden`), "the round's end stays in view")
	// A lone bid under the reserve (the sources' mean price) comes back.
	// The last auction adds the cash she holds then to her bid, and bids
	// bob's for him (game.LastAuctionCashPercent): hers may lose to his.
	assert.Regexp(t, `The broker (took|turned down) your bid of \$\d+|The broker sold nothing: yours was the only bid`,
		text(t, alice, `[data-live-list="feed"]`), "the broker answered alice's bid")
	assert.Contains(t, text(t, alice, "[data-live-alert]"), fmt.Sprintf("of %d", n))
	shot(alice, "round-end")

	// The hall of fame, with its careers table, fits a phone (it ran
	// wider): checked once, at three players, since axe-core takes seconds.
	if n != 3 {
		return
	}
	require.NoError(t, chromedp.Do(alice, chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile),
		chromedp.Navigate(p.base+"/game?function=hall"), chromedp.WaitVisible(chromedp.CSS(`.careers table`))))
	fits(t, alice, "hall with careers")
	accessible(t, alice, "hall with careers")
	screen(t, alice, fmt.Sprintf("round-%d-phone-hall.png", n))
}

// caseBob has the player of tab ctx spy on bob (whose row the JavaScript
// expression row finds) until a spy gets in, which a failed spy (the
// target's die beating two agents against security 1) may take a few
// tries to do.
// fileAge reads the age in ticks of the side's file on a target from the
// odds' why on the Dossiers page ("your side's file is 2 ticks old, fresh
// enough to case the place"); false when the file does not case it.
func fileAge(why string) (ticks int, fresh bool) {
	m := regexp.MustCompile(`file is (\d+) ticks? old, fresh enough`).FindStringSubmatch(why)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, true
}

func caseBob(t *testing.T, ctx context.Context, row string) {
	t.Helper()
	for range 10 {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(eval[string](t, ctx, `location.href`)), chromedp.WaitVisible(chromedp.CSS(`table`))))
		id := eval[string](t, ctx, row+`.dataset.player`)
		require.NoError(t, chromedp.Do(ctx, click(`tr[data-player="`+id+`"] form:has(input[value="spy"])`)))
		if eval[bool](t, ctx, `document.querySelector(".flash").textContent.includes("went through")`) {
			return
		}
	}
	t.Fatal("no spy got into bob's files in 10 tries")
}
