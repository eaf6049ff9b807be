package main

import (
	"cmp"
	"context"
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
	"github.com/stretchr/testify/require"
)

// TestBrowserPlayTrial is a play trial, not a check: three friends play two
// whole rounds (a week of ticks each, at a second a tick: about 35
// minutes at a second a tick; 70 at two) through the real pages in Chromium, each checking in on their
// own rhythm and deciding from what the pages show, and the test writes
// what each decided at each check-in, and what the last day's cash did,
// to trial.md in its artifacts (and to the log). It runs only with
// STATESECRETS_PLAYTRIAL=1 (STATESECRETS_PLAYTRIAL_TICK sets the tick).
//
//	STATESECRETS_PLAYTRIAL=1 go test -run TestBrowserPlayTrial -timeout 60m -artifacts -outputdir /tmp/trial ./cmd/gameserver
func TestBrowserPlayTrial(t *testing.T) {
	if os.Getenv("STATESECRETS_PLAYTRIAL") == "" {
		t.Skip("a 35-minute play trial: STATESECRETS_PLAYTRIAL=1 runs it")
	}
	tick := cmp.Or(os.Getenv("STATESECRETS_PLAYTRIAL_TICK"), "1s") // shorter for a quick look at the script
	p := startProgram(t, "-db", filepath.Join(t.TempDir(), "ss.db"), "-tick", tick, "-round", strconv.Itoa(7*game.AuctionTicks))
	first := browsertest.New(t, 1100, 900, 85*time.Minute)
	log := &trialLog{t: t}
	players := []*trialPlayer{
		{name: "ann", faction: "FBI", every: 36, plan: annPlans, log: log},
		{name: "ben", faction: "MIB", every: 72, plan: benPlans, log: log},
		{name: "cat", faction: "FBI", every: game.AuctionTicks, plan: catPlans, log: log},
	}
	for i, pl := range players {
		pl.ctx = first
		if i > 0 {
			ctx, cancel := chromedp.NewContext(first, chromedp.WithNewBrowserContext())
			defer cancel()
			pl.ctx = ctx
		}
		pl.base = p.base
		require.NoError(t, chromedp.Do(pl.ctx, register(p.base, pl.name, pl.faction)))
		pl.next = int64(i * 12) // they do not all sit down at once
	}
	seen := 1
	for {
		tick, round := players[0].clock(t)
		if round > seen {
			for _, pl := range players {
				pl.tick = tick
				pl.shot(t, "round-end")
			}
			players[0].roundEnded(t, seen)
			seen = round
		}
		if round > 2 {
			break
		}
		for _, pl := range players {
			if tick >= pl.next {
				pl.checkIn(t)
				pl.next = tick + pl.every
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	out := filepath.Join(t.ArtifactDir(), "trial.md")
	require.NoError(t, os.WriteFile(out, []byte(log.b.String()), 0o644))
	t.Logf("trial log: %s", out)
}

// trialLog is the trial's record, in Markdown.
type trialLog struct {
	t *testing.T
	b strings.Builder
}

func (l *trialLog) line(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.b.WriteString(s + "\n")
	l.t.Log(s)
}

// trialPlayer is one friend: who, how often they check in (ticks), and
// their plan for a check-in.
type trialPlayer struct {
	name, faction, base string
	every, next         int64
	ctx                 context.Context
	log                 *trialLog
	plan                func(t *testing.T, pl *trialPlayer, f figures) []string
	round, tick         int64 // of the check-in under way
	since               int64 // the tick of the check-in before this one
	robbed              int   // thefts suffered this round
}

// figures are what HQ shows of the player.
type figures struct {
	Tick, Round, RoundEnd          int64
	Cash, AP, Secrets, Agents, Sec int
	Trap, Sweep                    bool
	Robbed                         int // thefts suffered since the last check-in (Reports)
}

func (pl *trialPlayer) open(t *testing.T, fn string) {
	t.Helper()
	require.NoError(t, chromedp.Do(pl.ctx, chromedp.Navigate(pl.base+"/game?function="+fn), chromedp.WaitVisible(chromedp.CSS(`main h1`))))
}

// clock reads the tick and round off the player's open HQ, which the
// live stream keeps up to date (every check-in ends there).
func (pl *trialPlayer) clock(t *testing.T) (tick int64, round int) {
	t.Helper()
	if !eval[bool](t, pl.ctx, `!!document.querySelector('[data-live="tick"]')`) {
		pl.open(t, "hq")
	}
	v := eval[[]int64](t, pl.ctx, `[Number(document.querySelector('[data-live="tick"]').textContent),
		Number(document.querySelector('[data-live="round"]').textContent)]`)
	return v[0], int(v[1])
}

func (pl *trialPlayer) hq(t *testing.T) figures {
	t.Helper()
	pl.open(t, "hq")
	return eval[figures](t, pl.ctx, `(() => {
		const n = k => Number(document.querySelector('[data-live="' + k + '"]').textContent);
		const main = document.querySelector("main").textContent;
		return {Tick: n("tick"), Round: n("round"), RoundEnd: n("round-end"), Cash: n("cash"), AP: n("ap"), Secrets: n("secrets"),
			Agents: n("agents"), Sec: n("security"), Trap: main.includes("Your trap is set."), Sweep: main.includes("Your sweep runs until")};
	})()`)
}

// act clicks the button of the form sel on the open page and returns the
// outcome's flash.
func (pl *trialPlayer) act(t *testing.T, sel string) string {
	t.Helper()
	require.NoError(t, chromedp.Do(pl.ctx, click(sel)))
	return strings.TrimSpace(text(t, pl.ctx, ".flash"))
}

func (pl *trialPlayer) checkIn(t *testing.T) {
	t.Helper()
	f := pl.hq(t)
	if f.Round != pl.round {
		if pl.round != 0 {
			pl.log.line("")
		}
		pl.round, pl.robbed, pl.since = f.Round, 0, f.RoundEnd-7*game.AuctionTicks
	}
	pl.tick = f.Tick
	last := pl.lastDay(f)
	if last {
		pl.shot(t, "hq-last-day") // before the Reports page replaces HQ
	}
	f.Robbed = pl.theftsSince(t, pl.since)
	pl.robbed += f.Robbed
	pl.since = f.Tick
	day := (f.Tick - (f.RoundEnd - 7*game.AuctionTicks)) / game.AuctionTicks
	did := pl.plan(t, pl, f)
	after := pl.hq(t)
	if last {
		pl.shot(t, "hq-last-day-after")
	}
	pl.log.line("- round %d, tick %d (day %d), **%s**: $%d, %d AP, %d Secrets, %d agents, security %d -> %s. Now $%d, %d Secrets.",
		f.Round, f.Tick, day+1, pl.name, f.Cash, f.AP, f.Secrets, f.Agents, f.Sec, strings.Join(did, "; "), after.Cash, after.Secrets)
}

// roundEnded logs, from the news, how round ended and what the broker
// sold on its last day.
func (pl *trialPlayer) roundEnded(t *testing.T, round int) {
	t.Helper()
	pl.open(t, "news")
	lines := eval[[]string](t, pl.ctx, fmt.Sprintf(`(() => {
		const all = [...document.querySelectorAll('[data-live-list="news"] li span:not(.times)')].map(s => s.textContent);
		const end = all.findIndex(l => l.startsWith("Round %d is over"));
		return end < 0 ? [] : [all[end], ...all.slice(end + 1).filter(l => l.startsWith("The broker sold")).slice(0, 2)];
	})()`, round))
	pl.shot(t, "news-round-end")
	pl.log.line("")
	for _, l := range lines {
		pl.log.line("> %s", l)
	}
	pl.log.line("")
	pl.open(t, "hall")
	pl.shot(t, "hall-round-end")
	pl.open(t, "hq")
}

// lastDay reports whether the round's final auction comes before the
// player's next check-in: time to turn every dollar into Secrets.
func (pl *trialPlayer) lastDay(f figures) bool { return f.RoundEnd-1-f.Tick <= pl.every }

// buyCheapest buys at the asking price from the cheapest source with a
// Secret and heat under maxHeat, while AP and cash allow, keeping keep
// dollars; it returns what it did.
func (pl *trialPlayer) buyCheapest(t *testing.T, keep, maxHeat int) []string {
	t.Helper()
	var did []string
	for range 8 {
		pl.open(t, "sources")
		row := eval[[]int](t, pl.ctx, fmt.Sprintf(`(() => {
			const ap = Number(document.querySelector('[data-live="ap"]').textContent);
			const cash = Number(document.querySelector('[data-live="cash"]').textContent);
			for (const r of document.querySelectorAll("tr[data-source]")) {
				const price = Number(r.querySelector('[data-live="price"]').textContent.slice(1));
				const stock = Number(r.querySelector('[data-live="stock"]').textContent);
				const heat = parseInt(r.querySelector('[data-live="heat"]').textContent);
				if (ap >= %d && stock > 0 && heat < %d && price + %d <= cash && r.querySelector('form')) { return [Number(r.dataset.source), price, heat]; }
			}
			return [];
		})()`, game.HaggleAP, maxHeat, keep))
		if len(row) == 0 {
			break
		}
		out := pl.act(t, fmt.Sprintf(`tr[data-source="%d"] form`, row[0]))
		did = append(did, fmt.Sprintf("bought at $%d (heat %d%%): %q", row[1], row[2], short(out)))
	}
	return did
}

// rumorsFirst spreads rumors with all but the AP of two purchases when
// the round ends before the player's next check-in: cash left at the end
// is worth nothing, so the rumors' cash goes into Secrets and the bid now
// (the first trial rumored last and ended each round with $450-600 idle,
// a Secret's worth, between two players level on Secrets).
func (pl *trialPlayer) rumorsFirst(t *testing.T, f figures) []string {
	t.Helper()
	if !pl.lastDay(f) {
		return nil
	}
	if g := pl.hq(t); g.AP > 2*game.HaggleAP {
		return []string{"the last check-in: rumors first", pl.hqOrder(t, "rumor", g.AP-2*game.HaggleAP)}
	}
	return nil
}

// bid leaves a sealed bid of dollars at the broker's, or of dollars and
// the bid already there when all (a bid replaces the one held: the
// sources page shows it, "Your bid: $N", and offers to change it).
func (pl *trialPlayer) bid(t *testing.T, dollars int, all bool, why string) string {
	t.Helper()
	pl.open(t, "sources")
	if all {
		dollars += eval[int](t, pl.ctx, `Number((document.querySelector(".broker p strong")?.textContent ?? "$0").slice(1))`)
	}
	require.NoError(t, chromedp.Do(pl.ctx, chromedp.SetValue(chromedp.CSS(`#bid`), strconv.Itoa(dollars))))
	out := pl.act(t, `.broker form:has(input[name="function"][value="bid"])`)
	return fmt.Sprintf("bid $%d at the broker (%s): %q", dollars, why, short(out))
}

// hqOrder gives an order of HQ's, count times for a batch.
func (pl *trialPlayer) hqOrder(t *testing.T, fn string, count int) string {
	t.Helper()
	pl.open(t, "hq")
	if count > 1 {
		require.NoError(t, chromedp.Do(pl.ctx, chromedp.SetValue(chromedp.CSS(`form:has(input[name="function"][value="`+fn+`"]) input[name="count"]`), strconv.Itoa(count))))
	}
	return fmt.Sprintf("%s x%d: %q", fn, count, short(pl.act(t, `form:has(input[name="function"][value="`+fn+`"])`)))
}

func short(s string) string {
	if len(s) > 110 {
		return s[:110] + "..."
	}
	return s
}

// theftsSince counts the thefts from the player that succeeded after tick
// since, off the Reports page (the wire on HQ shows only its latest
// lines: a run of rumors pushes a theft off it).
func (pl *trialPlayer) theftsSince(t *testing.T, since int64) int {
	t.Helper()
	pl.open(t, "reports")
	return eval[int](t, pl.ctx, fmt.Sprintf(`[...document.querySelectorAll("tr[data-report]")].filter(r => {
		const c = r.querySelectorAll("td"), tick = Number((c[0].textContent.match(/tick (\d+)/) || [0, -1])[1]);
		return c[0].textContent.trim().startsWith("theft") && c[2].textContent.includes(%q) && c[5].textContent.includes("succeeded") && tick > %d;
	}).length`, pl.name, since))
}

// answerThefts sets a trap (and, for a thief, fortifies) when the wire
// tells of a theft not answered yet.
func (pl *trialPlayer) answerThefts(t *testing.T, f figures) []string {
	t.Helper()
	if f.Robbed == 0 {
		return nil
	}
	did := []string{fmt.Sprintf("robbed %d time(s) since the last visit", f.Robbed)}
	if !f.Trap && f.Cash >= game.TrapCost {
		did = append(did, pl.hqOrder(t, "trap", 1))
	}
	if f.Cash >= game.TrapCost+game.FortifyCost {
		did = append(did, pl.hqOrder(t, "fortify", 1))
	}
	return did
}

// annPlans: ann checks in every six hours and buys: the cheapest Secret
// at its price while cash lasts, cool sources only; a trap once she holds
// some; what is left goes to the broker; spare AP to rumors.
func annPlans(t *testing.T, pl *trialPlayer, f figures) []string {
	did := pl.answerThefts(t, f)
	if f.Secrets >= 2 && !f.Trap && f.Cash >= game.TrapCost+200 {
		did = append(did, pl.hqOrder(t, "trap", 1))
	}
	did = append(did, pl.rumorsFirst(t, f)...)
	did = append(did, pl.buyCheapest(t, 0, 30)...)
	g := pl.hq(t)
	if pl.lastDay(f) && g.Cash >= game.AuctionMinBid {
		did = append(did, pl.bid(t, g.Cash, true, "the last day: all of it"))
	} else if g.Cash >= game.AuctionMinBid+50 {
		did = append(did, pl.bid(t, game.AuctionMinBid+(g.Cash-game.AuctionMinBid)/2, false, "half of what is left over the least"))
	}
	if g.AP > 6 {
		did = append(did, pl.hqOrder(t, "rumor", g.AP-6))
	}
	return did
}

// benPlans: ben checks in twice a day and raids: four agents, a spy on
// the FBI player with the most Secrets, a theft when the Steal button
// shows 55% or better; a sweep once robbed; the rest buys.
func benPlans(t *testing.T, pl *trialPlayer, f figures) []string {
	did := pl.answerThefts(t, f)
	if pl.robbed > 0 && !f.Sweep && f.Cash >= game.SweepCost {
		did = append(did, pl.hqOrder(t, "sweep", 1))
	}
	if f.Agents < 4 && f.Cash >= game.RecruitCost+50 {
		did = append(did, pl.hqOrder(t, "recruit", 1))
	}
	// A thief may not rob while their cash would buy the gap
	// (game.CanStealFrom, said beside each dossier): buy first, then raid.
	did = append(did, pl.buyCheapest(t, 0, 40)...)
	did = append(did, pl.raid(t)...)
	did = append(did, pl.rumorsFirst(t, f)...)
	did = append(did, pl.buyCheapest(t, 0, 40)...)
	g := pl.hq(t)
	if pl.lastDay(f) && g.Cash >= game.AuctionMinBid {
		did = append(did, pl.bid(t, g.Cash, true, "the last day: all of it"))
	}
	if g.AP > 8 {
		did = append(did, pl.hqOrder(t, "rumor", g.AP-8))
	}
	return did
}

// raid spies on the rival the Steal button likes best among those ahead
// of the thief on the Ranking (a thief may rob only a player holding more
// Secrets), and steals when its odds reach 55%, reading the odds off the
// buttons; after a theft it reads the odds of its report beside them.
func (pl *trialPlayer) raid(t *testing.T) []string {
	t.Helper()
	var did []string
	for range 3 {
		pl.open(t, "ranking")
		ahead := eval[[]string](t, pl.ctx, `(() => {
			const rows = [...document.querySelectorAll("tr[data-player]")];
			const mine = Number(rows.find(r => r.classList.contains("you")).querySelector('[data-standing="secrets"]').textContent);
			return rows.filter(r => Number(r.querySelector('[data-standing="secrets"]').textContent) > mine).map(r => r.dataset.player);
		})()`)
		if len(ahead) == 0 {
			return append(did, "nobody ahead on the Ranking to rob")
		}
		pl.open(t, "dossiers")
		r := eval[[]string](t, pl.ctx, fmt.Sprintf(`(() => {
			const ahead = %s;
			let best = null;
			for (const row of document.querySelectorAll("tr[data-player]")) {
				const steal = row.querySelector('form:has(input[value="steal"]) button');
				if (!steal || row.querySelector(".protected") || !ahead.includes(row.dataset.player)) { continue; }
				const odds = parseInt(steal.dataset.odds), fresh = row.querySelector("p.odds").textContent.includes("fresh enough");
				if (!best || odds > best.odds) { best = {id: row.dataset.player, odds, fresh, spy: parseInt(row.querySelector('form:has(input[value="spy"]) button').dataset.odds), why: row.querySelector("p.odds").textContent}; }
			}
			return best ? [best.id, String(best.odds), String(best.fresh), String(best.spy), best.why] : [];
		})()`, jsStrings(ahead)))
		if len(r) == 0 {
			if low := eval[string](t, pl.ctx, `document.querySelector(".lying-low")?.textContent ?? ""`); low != "" {
				return append(did, fmt.Sprintf("no raid: %d ahead, but %s", len(ahead), strings.TrimPrefix(low, "No theft: ")))
			}
			return append(did, fmt.Sprintf("no raid: the %d ahead are protected", len(ahead)))
		}
		odds, _ := strconv.Atoi(r[1])
		switch {
		case r[2] == "true" && odds >= 55:
			pl.shot(t, "dossiers-before-steal")
			out := short(pl.act(t, `tr[data-player="`+r[0]+`"] form:has(input[value="steal"])`))
			pl.open(t, "reports")
			rep := eval[string](t, pl.ctx, `(() => { const r = document.querySelector("tr[data-report]"); return r ? r.querySelector('[data-label="Odds"]').textContent + " in its report" : "no report"; })()`)
			pl.shot(t, "report-after-steal")
			did = append(did, fmt.Sprintf("steal at %d%% (%s; %s): %q", odds, short(r[4]), rep, out))
			return did
		case r[2] == "false":
			did = append(did, fmt.Sprintf("spy at %s%%: %q", r[3], short(pl.act(t, `tr[data-player="`+r[0]+`"] form:has(input[value="spy"])`))))
		default:
			return append(did, fmt.Sprintf("no theft: the best odds were %d%%", odds))
		}
	}
	return did
}

// jsStrings writes ss as a JavaScript array of strings.
func jsStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// shot saves the whole page the player has open as
// <name>-<player>-r<round>-t<tick>.png in the artifacts, for a look
// afterwards.
func (pl *trialPlayer) shot(t *testing.T, what string) {
	t.Helper()
	screenshot(t, pl.ctx, fmt.Sprintf("%s-%s-r%d-t%d.png", what, pl.name, pl.round, pl.tick))
}

// catPlans: cat checks in once a day: answers a theft with a trap, buys
// what the day's cash buys, bids the rest at the broker, rumors with all
// but a few AP.
func catPlans(t *testing.T, pl *trialPlayer, f figures) []string {
	did := pl.answerThefts(t, f)
	did = append(did, pl.rumorsFirst(t, f)...)
	did = append(did, pl.buyCheapest(t, 0, 50)...)
	g := pl.hq(t)
	if g.Cash >= game.AuctionMinBid {
		did = append(did, pl.bid(t, g.Cash, true, "the rest of the day's cash"))
	}
	if g.AP > 4 {
		did = append(did, pl.hqOrder(t, "rumor", g.AP-4))
	}
	return did
}
