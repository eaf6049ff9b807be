package game_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Dice returns its values in order as game.Dice results, failing the test on
// a value out of range. A d6 showing k is the value k-1.
type Dice struct {
	tb     testing.TB
	values []int
}

// IntN implements game.Dice.
func (d *Dice) IntN(n int) int {
	d.tb.Helper()
	require.NotEmpty(d.tb, d.values, "the rules rolled more dice than the test scripted")
	v := d.values[0]
	d.values = d.values[1:]
	require.Less(d.tb, v, n, "scripted roll out of range [0,%d)", n)
	return v
}

func alice() game.Player {
	return game.Player{ID: 1, Name: "alice", Faction: game.FBI, Cash: 300, Agents: 2, Security: 1, AP: 10}
}

func bob() game.Player {
	return game.Player{ID: 2, Name: "bob", Faction: game.MIB, Cash: 300, Agents: 2, Security: 1, Secrets: 1, AP: 10}
}

func throat() game.Source {
	return game.Source{ID: 1, Name: "Deep Throat", Secrets: 2, Price: 300, BasePrice: 300}
}

// ruleCase is one action resolved against players and a source; the want
// fields are edits to the inputs, applied to copies.
type ruleCase struct {
	name    string
	tick    int64 // default 20, after bob's protection
	actor   func(*game.Player)
	target  func(*game.Player)
	source  func(*game.Source)
	action  game.Action
	dice    []int
	errMsg  string // the EINVALID message expected; "" for success
	outcome string // contained in the Outcome
	news    string // contained in the public news line; "" for none
	intel   bool
	blind   bool // steal: the thief's side holds no fresh dossier (Turn.Cased false)
	// cheapest is Turn.Cheapest, the cheapest Secret on sale (0: none).
	cheapest int
	post     string
	want     func(actor, target *game.Player, source *game.Source)
}

func TestResolve(t *testing.T) {
	for _, tc := range append(append(economyCases(), haggleCases()...), covertCases()...) {
		t.Run(tc.name, func(t *testing.T) { tc.run(t) })
	}
}

func TestResolve_PostCooldown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		since  time.Duration // from the last post to now
		never  bool          // no last post
		errMsg string        // "" for allowed
	}{
		{name: "NeverPosted", never: true},
		{name: "Immediately", since: 0, errMsg: "One post per 30 seconds: wait 30 more seconds before posting again."},
		{name: "RoundsUp", since: 28*time.Second + time.Millisecond, errMsg: "wait 2 more seconds"},
		{name: "LastSecond", since: game.PostCooldown - time.Nanosecond, errMsg: "wait 1 more second before"},
		{name: "ExactlyCooldown", since: game.PostCooldown},
		{name: "Long", since: time.Hour},
		{name: "ClockSetBack", since: -time.Hour, errMsg: "wait 30 more seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a post within PostCooldown of the last is refused with the
			// wait rounded up to whole seconds, never more than one cooldown.
			actor := alice()
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			turn := &game.Turn{Tick: 20, Actor: &actor, Now: now, LastPost: now.Add(-tc.since)}
			if tc.never {
				turn.LastPost = time.Time{}
			}
			res, err := game.Resolve(turn, game.Action{Kind: game.PostMessage, Body: "hello"})
			if tc.errMsg != "" {
				RequireCode(t, err, game.EINVALID, tc.errMsg)
				assert.Equal(t, alice(), actor)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "hello", res.Post)
		})
	}
}

func (tc ruleCase) run(t *testing.T) {
	actor, target, source := alice(), bob(), throat()
	apply(tc.actor, &actor)
	apply(tc.target, &target)
	apply(tc.source, &source)
	if tc.action.Kind == game.Spy || tc.action.Kind == game.Steal {
		tc.action.TargetID = target.ID
	}
	wantActor, wantTarget, wantSource := actor, target, source
	tick := tc.tick
	if tick == 0 {
		tick = 20
	}
	if tc.action.Kind == game.Steal && tc.errMsg == "" {
		wantActor.LieLowUntil = tick + game.StealCooldown // every attempt, whatever came of it
	}
	dice := &Dice{tb: t, values: tc.dice}
	turn := &game.Turn{Tick: tick, Actor: &actor, Target: &target, Source: &source, Rand: dice, Cased: !tc.blind, Cheapest: tc.cheapest}
	res, err := game.Resolve(turn, tc.action)
	assert.Empty(t, dice.values, "scripted rolls left unused")
	if tc.errMsg != "" {
		// Ensure a refused action is EINVALID, names the problem, and changes nothing.
		RequireCode(t, err, game.EINVALID, tc.errMsg)
		assert.Equal(t, wantActor, actor)
		assert.Equal(t, wantTarget, target)
		assert.Equal(t, wantSource, source)
		return
	}
	require.NoError(t, err)
	if tc.want != nil {
		tc.want(&wantActor, &wantTarget, &wantSource)
	}
	assert.Equal(t, wantActor, actor, "actor")
	assert.Equal(t, wantTarget, target, "target")
	assert.Equal(t, wantSource, source, "source")
	assert.Contains(t, res.Outcome.Text, tc.outcome)
	assert.Equal(t, tc.intel, res.Intel)
	assert.Equal(t, tc.post, res.Post)
	checkNotes(t, tc, turn, res)
}

// checkNotes: the outcome is the actor's feed line, and the news is there when expected.
func checkNotes(t *testing.T, tc ruleCase, turn *game.Turn, res game.Result) {
	require.NotEmpty(t, res.Notes)
	assert.Equal(t, game.Note{Tick: turn.Tick, PlayerID: turn.Actor.ID, Text: res.Outcome.Text}, res.Notes[0])
	var news []string
	for _, n := range res.Notes {
		if n.PlayerID == 0 {
			news = append(news, n.Text)
		}
	}
	if tc.news == "" {
		assert.Empty(t, news)
		return
	}
	require.NotEmpty(t, news)
	assert.Contains(t, strings.Join(news, " | "), tc.news)
}

func apply[T any](edit func(*T), v *T) {
	if edit != nil {
		edit(v)
	}
}

// kept is what a source keeps of a refused offer.
func kept(offer int) int { return (offer*game.HaggleFailPercent + 99) / 100 }

// risen is a source's price after a sale at price.
func risen(price int) int { return price + price*game.PriceRisePercent/100 + game.PriceRiseDollars }

func economyCases() []ruleCase {
	return []ruleCase{
		{name: "RecruitOK", action: game.Action{Kind: game.Recruit}, outcome: "now run 3 agents",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash, a.Agents = 9, 200, 3 }},
		{name: "RecruitNoAP", actor: func(p *game.Player) { p.AP = 0 }, action: game.Action{Kind: game.Recruit},
			errMsg: "Not enough action points: recruiting needs 1, you have 0."},
		{name: "RecruitNoCash", actor: func(p *game.Player) { p.Cash = 99 }, action: game.Action{Kind: game.Recruit},
			errMsg: "Not enough cash: recruiting costs $100, you have $99."},
		{name: "FortifyOK", action: game.Action{Kind: game.Fortify}, outcome: "security is now 2",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash, a.Security = 9, 220, 2 }},
		{name: "FortifyNoCash", actor: func(p *game.Player) { p.Cash = 79 }, action: game.Action{Kind: game.Fortify},
			errMsg: "fortifying costs $80, you have $79"},
		{name: "RumorSecret", action: game.Action{Kind: game.Rumor}, dice: []int{game.RumorSecretPercent - 1}, outcome: "new Secret",
			news: "alice (FBI) turned a bar-room rumor", want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Secrets = 9, 1 }},
		{name: "RumorNothing", action: game.Action{Kind: game.Rumor}, dice: []int{game.RumorSecretPercent}, outcome: "led nowhere",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		{name: "RumorLeastCash", action: game.Action{Kind: game.Rumor}, dice: []int{30, 0},
			outcome: fmt.Sprintf("for $%d.", game.RumorMinCash),
			want:    func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash = 9, 300+game.RumorMinCash }},
		{name: "RumorMostCash", action: game.Action{Kind: game.Rumor}, dice: []int{99, game.RumorMaxCash - game.RumorMinCash},
			outcome: fmt.Sprintf("for $%d.", game.RumorMaxCash),
			want:    func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash = 9, 300+game.RumorMaxCash }},
		{name: "RumorNoAP", actor: func(p *game.Player) { p.AP = 0 }, action: game.Action{Kind: game.Rumor},
			errMsg: "chasing a rumor needs 1, you have 0"},
		{name: "PostOK", action: game.Action{Kind: game.PostMessage, Body: "  The truth is out there.\n"},
			outcome: "posted", post: "The truth is out there."},
		{name: "PostLongest", action: game.Action{Kind: game.PostMessage, Body: strings.Repeat("é", 500)},
			outcome: "posted", post: strings.Repeat("é", 500)},
		{name: "PostNoAPNeeded", actor: func(p *game.Player) { p.AP = 0 },
			action: game.Action{Kind: game.PostMessage, Body: "x"}, outcome: "posted", post: "x"},
		{name: "PostEmpty", action: game.Action{Kind: game.PostMessage, Body: " \t\n"}, errMsg: "Your post is empty."},
		{name: "PostTooLong", action: game.Action{Kind: game.PostMessage, Body: strings.Repeat("é", 501)},
			errMsg: "at most 500 characters; yours has 501"},
		{name: "Unknown", action: game.Action{Kind: "dance"}, errMsg: `Unknown action "dance".`},
	}
}

func haggleCases() []ruleCase {
	offer := func(n int) game.Action { return game.Action{Kind: game.Haggle, SourceID: 1, Offer: n} }
	return []ruleCase{
		// A roll below the offer (out of the price) is a deal.
		{name: "HaggleWin", action: offer(150), dice: []int{149}, outcome: "took your $150",
			news: "alice (FBI) bought a Secret from Deep Throat.", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 150, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		{name: "HaggleLose", action: offer(151), dice: []int{151}, outcome: fmt.Sprintf("pocketed $%d of your $151", kept(151)),
			want: func(a, _ *game.Player, s *game.Source) { a.AP, a.Cash, s.Heat = 9, 300-kept(151), game.HaggleFailHeat }},
		{name: "HaggleOverpayCapped", actor: func(p *game.Player) { p.Cash = 500 }, action: offer(450), dice: []int{299},
			outcome: "took your $300", news: "bought a Secret", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 200, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		// A refused offer of a quarter of the price or more heats the source;
		// a lowball below that costs as much of the offer but adds no heat.
		{name: "HaggleQuarterHeats", action: offer(75), dice: []int{75}, outcome: fmt.Sprintf("pocketed $%d of your $75", kept(75)),
			want: func(a, _ *game.Player, s *game.Source) { a.AP, a.Cash, s.Heat = 9, 300-kept(75), game.HaggleFailHeat }},
		// A lowball rolls no burn, however hot the source.
		{name: "HaggleLowballNoHeat", source: func(s *game.Source) { s.Heat = 90 }, action: offer(74), dice: []int{74},
			outcome: fmt.Sprintf("laughed at your $74 and kept $%d", kept(74)), want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash = 9, 300-kept(74) }},
		{name: "HaggleLowballOne", action: offer(1), dice: []int{1}, outcome: "laughed at your $1 and kept $1",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Cash = 9, 299 }},
		// Every deal but a lowball risks burning the source: a roll under
		// its heat (before the deal) burns it, and the burner pays BurnFine.
		{name: "HaggleBurns", source: func(s *game.Source) { s.Heat = 80 }, action: offer(80), dice: []int{80, 79},
			outcome: "Then Deep Throat went to ground: you burned the source, and covering your tracks cost you $100.",
			news:    "Deep Throat was burned after a deal with alice (FBI) and lies low until tick 32.",
			want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, s.Heat, s.BurnedUntil = 9, 300-kept(80)-game.BurnFine, 0, 20+game.BurnTicks
			}},
		{name: "HaggleHeatNoBurn", source: func(s *game.Source) { s.Heat = 80 }, action: offer(80), dice: []int{80, 80},
			outcome: "told you nothing.", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, s.Heat = 9, 300-kept(80), game.BurnHeat
			}},
		{name: "HaggleWinBurns", source: func(s *game.Source) { s.Heat = 50 }, action: offer(300), dice: []int{0, 49},
			outcome: "whispered a Secret. You hold 1. Then Deep Throat went to ground",
			news:    "bought a Secret from Deep Throat. | Deep Throat was burned after a deal with alice (FBI)",
			want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 0, 1
				s.Secrets, s.Price, s.Heat, s.BurnedUntil = 1, risen(300), 0, 20+game.BurnTicks
			}},
		{name: "HaggleBurnFineCapped", actor: func(p *game.Player) { p.Cash = 100 }, source: func(s *game.Source) { s.Heat = 75 },
			action: offer(100), dice: []int{100, 0}, outcome: fmt.Sprintf("cost you $%d.", 100-kept(100)), news: "was burned",
			want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, s.Heat, s.BurnedUntil = 9, 0, 0, 20+game.BurnTicks
			}},
		// The price the player saw: a move since refuses an offer that no
		// longer covers the price, with the new price and odds.
		{name: "HagglePriceSeen", action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 150, Price: 300}, dice: []int{149},
			outcome: "took your $150", news: "bought", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 150, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		{name: "HagglePriceRose", action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 250, Price: 250},
			errMsg: "Deep Throat's price rose from $250 to $300 since you looked: your $250 offer is no longer a sure deal, " +
				"it would now have 83% odds. Nothing was spent"},
		{name: "HagglePriceRoseGamble", action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 150, Price: 250},
			errMsg: "Deep Throat's price rose from $250 to $300 since you looked: the odds of your $150 offer fell from 60% to 50%."},
		// A rise of $1 changes the odds by less than a whole percent: the
		// refusal still tells the two apart ("60% odds, not 60%" told nothing).
		{name: "HagglePriceRoseADollar", source: func(s *game.Source) { s.Price = 201 }, action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 120, Price: 200},
			errMsg: "the odds of your $120 offer fell from 60.0% to 59.7%."},
		// A price that fell only improves the offer: the haggle goes ahead,
		// at the odds of the new price (150 of 300, where the player saw 400).
		{name: "HagglePriceFell", action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 150, Price: 400}, dice: []int{149},
			outcome: "took your $150", news: "bought", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 150, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		{name: "HagglePriceFellADollarLost", source: func(s *game.Source) { s.Price = 299 }, action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 150, Price: 300},
			dice: []int{150}, outcome: fmt.Sprintf("pocketed $%d of your $150", kept(150)), want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, s.Heat = 9, 300-kept(150), game.HaggleFailHeat
			}},
		{name: "HagglePriceMovedOfferCovers", action: game.Action{Kind: game.Haggle, SourceID: 1, Offer: 300, Price: 250},
			dice: []int{299}, outcome: "took your $300", news: "bought", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 0, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		{name: "HaggleNoAP", actor: func(p *game.Player) { p.AP = 1 }, action: offer(100),
			errMsg: "Not enough action points: haggling needs 2, you have 1."},
		{name: "HaggleZeroOffer", action: offer(0), errMsg: "Make an offer of at least $1."},
		{name: "HaggleNegativeOffer", action: offer(-5), errMsg: "Make an offer of at least $1."},
		{name: "HaggleOfferOverCash", action: offer(301), errMsg: "You offered $301 but have only $300."},
		{name: "HaggleBurned", source: func(s *game.Source) { s.BurnedUntil = 21 }, action: offer(100),
			errMsg: "Deep Throat is burned and lying low until tick 21."},
		{name: "HaggleBackFromBurn", source: func(s *game.Source) { s.BurnedUntil = 20 }, action: offer(300),
			dice: []int{0}, outcome: "took your $300", news: "bought", want: func(a, _ *game.Player, s *game.Source) {
				a.AP, a.Cash, a.Secrets = 8, 0, 1
				s.Secrets, s.Price, s.Heat = 1, risen(300), game.HaggleWinHeat
			}},
		{name: "HaggleSoldOut", source: func(s *game.Source) { s.Secrets = 0 }, action: offer(100),
			errMsg: "Deep Throat has no Secrets to sell right now"},
	}
}

func covertCases() []ruleCase {
	spy, steal := game.Action{Kind: game.Spy}, game.Action{Kind: game.Steal}
	return []ruleCase{
		// Two d6: the actor's (agents + roll) against the target's (security + roll).
		{name: "SpyWin", action: spy, dice: []int{5, 0}, outcome: "went through bob's files: $300, 2 agents, security 1, 1 Secret, 10 AP",
			intel: true, news: "Someone went through the files of bob (MIB).",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		{name: "SpyTieLoses", action: spy, dice: []int{0, 1}, outcome: "spotted in bob's office",
			news: "alice (FBI) was caught spying on bob (MIB).", want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		{name: "SpyProtectedTargetOK", tick: 1, target: func(p *game.Player) { p.ProtectedUntil = 12 }, action: spy,
			dice: []int{5, 0}, intel: true, news: "Someone went through", want: func(a, _ *game.Player, _ *game.Source) { a.AP = 9 }},
		{name: "SpySelf", target: func(p *game.Player) { p.ID = 1 }, action: spy, errMsg: "You cannot spy on yourself."},
		{name: "SpyNoAP", actor: func(p *game.Player) { p.AP = 0 }, action: spy, errMsg: "spying needs 1, you have 0"},
		// Stealing: agents + roll against twice the security + roll.
		{name: "StealWin", action: steal, dice: []int{5, 0}, outcome: "stole a Secret from bob. You hold 1.",
			news: "Someone stole a Secret from bob (MIB).", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 1, 0, 20+game.AlertTicks
			}},
		{name: "StealTieLoses", action: steal, dice: []int{1, 2}, outcome: "one of your agents was caught",
			news: "alice (FBI) was caught trying to steal from bob (MIB) and lost an agent.",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Agents = 7, 1 }},
		{name: "StealFromOneAhead", actor: func(p *game.Player) { p.Secrets = 3 }, target: func(p *game.Player) { p.Secrets = 4 },
			action: steal, dice: []int{5, 0}, news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 4, 3, 20+game.AlertTicks
			}},
		{name: "StealFromLevel", actor: func(p *game.Player) { p.Secrets = 4 }, target: func(p *game.Player) { p.Secrets = 4 },
			action: steal, errMsg: "bob holds 4 Secrets; you may only steal from players holding more than your 4"},
		{name: "StealFromBehind", actor: func(p *game.Player) { p.Secrets = 5 }, target: func(p *game.Player) { p.Secrets = 4 },
			action: steal, errMsg: "bob holds 4 Secrets; you may only steal from players holding more than your 5"},
		// A thief whose cash, their bid counted, would buy the gap at the
		// cheapest source may not steal: a theft catches up, it does not
		// pay to stay behind with cash in hand.
		{name: "StealCashBuysTheGap", actor: func(p *game.Player) { p.Secrets, p.Cash = 3, 250 }, target: func(p *game.Player) { p.Secrets = 4 },
			cheapest: 250, action: steal, errMsg: "Your $250 (your bid counted) would buy the 1 Secret bob is ahead of you by at the cheapest source's $250"},
		{name: "StealBidCounts", actor: func(p *game.Player) { p.Secrets, p.Cash, p.Bid = 2, 200, 300 }, target: func(p *game.Player) { p.Secrets = 4 },
			cheapest: 250, action: steal, errMsg: "Your $500 (your bid counted) would buy the 2 Secrets bob is ahead of you by"},
		{name: "StealCashShortOfTheGap", actor: func(p *game.Player) { p.Secrets, p.Cash = 2, 499 }, target: func(p *game.Player) { p.Secrets = 4 },
			cheapest: 250, action: steal, dice: []int{5, 0}, news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 3, 3, 20+game.AlertTicks
			}},
		{name: "StealNothingOnSale", actor: func(p *game.Player) { p.Secrets, p.Cash = 3, 5000 }, target: func(p *game.Player) { p.Secrets = 4 },
			action: steal, dice: []int{5, 0}, news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 4, 3, 20+game.AlertTicks
			}},
		{name: "StealNoSecrets", target: func(p *game.Player) { p.Secrets = 0 }, action: steal, errMsg: "bob has no Secrets to steal."},
		{name: "StealProtected", target: func(p *game.Player) { p.ProtectedUntil = 21 }, action: steal,
			errMsg: "bob is protected from theft until tick 21 (new players, and players just robbed, get a breather)."},
		{name: "StealProtectionOver", target: func(p *game.Player) { p.ProtectedUntil = 20 }, action: steal,
			dice: []int{5, 0}, news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 1, 0, 20+game.AlertTicks
			}},
		{name: "StealEndsOwnProtection", actor: func(p *game.Player) { p.ProtectedUntil = 25 }, action: steal,
			dice: []int{1, 2}, outcome: "agents was caught. Your protection from theft is over", news: "was caught trying",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Agents, a.ProtectedUntil = 7, 1, 20 }},
		{name: "StealNoAgents", actor: func(p *game.Player) { p.Agents = 0 }, action: steal,
			errMsg: "Stealing needs at least one agent"},
		// After a theft the thief's agents lie low for StealCooldown ticks.
		{name: "StealLyingLow", actor: func(p *game.Player) { p.LieLowUntil = 21 }, action: steal,
			errMsg: "Your agents lie low after your last theft until tick 21."},
		{name: "StealLainLowEnough", actor: func(p *game.Player) { p.LieLowUntil = 20 }, action: steal, dice: []int{5, 0},
			news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 1, 0, 20+game.AlertTicks
			}},
		{name: "StealNoAP", actor: func(p *game.Player) { p.AP = 2 }, action: steal,
			errMsg: "Not enough action points: stealing needs 3, you have 2."},
		{name: "StealSelf", target: func(p *game.Player) { p.ID = 1 }, action: steal, errMsg: "You cannot steal from yourself."},
		// Stealing beats the target's security (not twice it, as it once was).
		{name: "StealBeatsSecurity", target: func(p *game.Player) { p.Security = 4 }, action: steal, dice: []int{5, 1},
			news: "Someone stole", want: func(a, b *game.Player, _ *game.Source) {
				a.AP, a.Secrets, b.Secrets, b.ProtectedUntil = 7, 1, 0, 20+game.AlertTicks
			}},
		// Without a fresh dossier the thief goes in blind: the same roll
		// that beats security 4 cased meets security + BlindDefence.
		{name: "StealBlindLoses", blind: true, target: func(p *game.Player) { p.Security = 4 }, action: steal, dice: []int{5, 1},
			outcome: "one of your agents was caught", news: "was caught trying",
			want: func(a, _ *game.Player, _ *game.Source) { a.AP, a.Agents = 7, 1 }},
		// Teammates share their files; they cannot spy on or rob each other.
		{name: "SpyOwnFaction", target: func(p *game.Player) { p.Faction = game.FBI }, action: spy,
			errMsg: "You cannot spy on bob: bob is FBI, like you, and your side already shares its files."},
		{name: "StealOwnFaction", target: func(p *game.Player) { p.Faction = game.FBI }, action: steal,
			errMsg: "You cannot steal from bob: bob is FBI, like you"},
		{name: "StealOwnFactionMIB", actor: func(p *game.Player) { p.Faction = game.MIB }, action: steal,
			errMsg: "You cannot steal from bob: bob is MIB, like you"},
	}
}

// Ensure a haggle succeeds with probability offer/price, over many tries
// with a fixed *rand.Rand.
func TestResolve_HaggleOdds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, offer := range []int{30, 150, 270} {
		wins := 0
		const tries = 4000
		for range tries {
			actor, source := alice(), throat()
			res, err := game.Resolve(&game.Turn{Tick: 20, Actor: &actor, Source: &source, Rand: rng},
				game.Action{Kind: game.Haggle, SourceID: 1, Offer: offer})
			require.NoError(t, err)
			if actor.Secrets == 1 {
				wins++
				assert.Contains(t, res.Outcome.Text, "whispered a Secret")
			}
		}
		assert.InDelta(t, float64(offer)/300, float64(wins)/tries, 0.03, "offer $%d", offer)
	}
}

// Ensure rumors mostly pay, sometimes fail, and rarely give a Secret.
func TestResolve_RumorOdds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var secrets, nothing, cash int
	const tries = 10000
	for range tries {
		actor := alice()
		_, err := game.Resolve(&game.Turn{Tick: 20, Actor: &actor, Rand: rng}, game.Action{Kind: game.Rumor})
		require.NoError(t, err)
		switch {
		case actor.Secrets == 1:
			secrets++
		case actor.Cash == 300:
			nothing++
		default:
			cash++
			require.True(t, actor.Cash >= 300+game.RumorMinCash && actor.Cash <= 300+game.RumorMaxCash, "cash %d", actor.Cash)
		}
	}
	assert.InDelta(t, game.RumorSecretPercent/100.0, float64(secrets)/tries, 0.01)
	assert.InDelta(t, game.RumorNothingPercent/100.0, float64(nothing)/tries, 0.02)
	assert.InDelta(t, 1-(game.RumorSecretPercent+game.RumorNothingPercent)/100.0, float64(cash)/tries, 0.02)
}

func TestValidateName(t *testing.T) {
	for _, name := range []string{"abc", "Agent_Mulder-1", strings.Repeat("x", 20)} {
		assert.NoError(t, game.ValidateName(name), name)
	}
	for name, msg := range map[string]string{
		"ab": "3 to 20 characters", strings.Repeat("x", 21): "has 21", "": "has 0",
		"with space": `has ' '`, "dana<b>": `has '<'`, "mülder": `has 'ü'`,
	} {
		RequireCode(t, game.ValidateName(name), game.EINVALID, msg)
	}
}

func TestParseFaction(t *testing.T) {
	for in, want := range map[string]game.Faction{"FBI": game.FBI, "mib": game.MIB, " Fbi ": game.FBI} {
		f, err := game.ParseFaction(in)
		require.NoError(t, err)
		assert.Equal(t, want, f)
	}
	for _, in := range []string{"", "CIA", "FBI MIB"} {
		_, err := game.ParseFaction(in)
		RequireCode(t, err, game.EINVALID, "choose FBI or MIB")
	}
}

func TestErrorHelpers(t *testing.T) {
	assert.Equal(t, "", game.ErrorCode(nil))
	assert.Equal(t, "", game.ErrorMessage(nil))
	err := game.Errorf(game.ENOTFOUND, "No %s.", "thing")
	assert.Equal(t, game.ENOTFOUND, game.ErrorCode(err))
	assert.Equal(t, "No thing.", game.ErrorMessage(err))
	assert.Equal(t, "game: not_found: No thing.", err.Error())
	wrapped := fmt.Errorf("acting: %w", err)
	assert.Equal(t, game.ENOTFOUND, game.ErrorCode(wrapped), "an *Error in the chain keeps its code")
	plain := errors.New("disk on fire")
	assert.Equal(t, game.EINTERNAL, game.ErrorCode(plain))
	assert.Equal(t, "Internal error.", game.ErrorMessage(plain))
}

// FuzzResolve plays any action on any state: a refusal changes nothing, and
// an action never drives a count negative or creates Secrets out of nothing
// (a rumor may find one).
func FuzzResolve(f *testing.F) {
	for i, kind := range []game.ActionKind{game.Recruit, game.Fortify, game.Rumor, game.Haggle, game.Spy, game.Steal,
		game.PostMessage, "nope"} {
		f.Add(string(kind), uint64(i), 150, 10, 300, 2, 1, 1, 3, "hello")
	}
	f.Fuzz(func(t *testing.T, kind string, seed uint64, offer, ap, cash, agents, security, secrets, srcSecrets int,
		body string) {
		nonneg := func(n int) int { return max(0, min(n, 1000)) }
		actor, target, source := alice(), bob(), throat()
		actor.AP, actor.Cash, actor.Agents, actor.Security, actor.Secrets =
			nonneg(ap), nonneg(cash), nonneg(agents), nonneg(security), nonneg(secrets)
		target.Secrets, source.Secrets = nonneg(secrets/2+1), nonneg(srcSecrets)
		a0, t0, s0 := actor, target, source
		turn := &game.Turn{Tick: 20, Actor: &actor, Target: &target, Source: &source, Rand: rand.New(rand.NewPCG(seed, 1))}
		_, err := game.Resolve(turn, game.Action{Kind: game.ActionKind(kind), Offer: offer, Body: body})
		if err != nil {
			require.Equal(t, game.EINVALID, game.ErrorCode(err))
			require.Equal(t, [3]any{a0, t0, s0}, [3]any{actor, target, source})
			return
		}
		for _, n := range []int{actor.AP, actor.Cash, actor.Agents, actor.Secrets, target.Secrets, source.Secrets, source.Heat} {
			require.GreaterOrEqual(t, n, 0)
		}
		require.Less(t, source.Heat, game.BurnHeat)
		total, total0 := actor.Secrets+target.Secrets+source.Secrets, a0.Secrets+t0.Secrets+s0.Secrets
		if kind == string(game.Rumor) {
			require.Contains(t, []int{total0, total0 + 1}, total)
		} else {
			require.Equal(t, total0, total)
		}
	})
}
