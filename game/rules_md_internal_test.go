package game

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite RULES.md from RULES.md.tmpl")

// Odds table bounds: agents 1..oddsAgents by security 1..oddsSecurity.
const oddsAgents, oddsSecurity = 10, 8

// rulesData is every number RULES.md quotes, by the name the template uses.
func rulesData() map[string]any {
	return map[string]any{
		"TickMinutes": int(DefaultTickInterval / time.Minute), "RoundTicks": int64(roundLength / DefaultTickInterval),
		"PayTicks": PayTicks, "APPerPay": APPerPay, "MaxAP": MaxAP,
		"BaseIncome": BaseIncome, "SecretIncome": SecretIncome, "AgentUpkeep": AgentUpkeep, "GuardUpkeep": GuardUpkeep, "CatchUpPay": CatchUpPay, "CatchUpMax": CatchUpMax,
		"DuoTable": DuoTable, "DuoCatchUpPay": DuoCatchUpPay, "DuoSecurity": DuoSecurity,
		"HeatCooling": HeatCooling, "PriceDrift": PriceDrift, "SourceSecretChance": SourceSecretChance,
		"MaxSourceSecrets": MaxSourceSecrets, "SourceStartSecrets": SourceStartSecrets, "BurnTicks": BurnTicks,
		"StartCash": StartCash, "StartAgents": StartAgents, "StartSecurity": StartSecurity, "StartAP": StartAP,
		"NewPlayerProtection": NewPlayerProtection, "AlertTicks": AlertTicks,
		"RecruitAP": RecruitAP, "RecruitCost": RecruitCost, "FortifyAP": FortifyAP, "FortifyCost": FortifyCost,
		"RumorAP": RumorAP, "RumorSecretPercent": RumorSecretPercent, "RumorNothingPercent": RumorNothingPercent,
		"RumorCashPercent": 100 - RumorSecretPercent - RumorNothingPercent,
		"RumorMinCash":     RumorMinCash, "RumorMaxCash": RumorMaxCash,
		"HaggleAP": HaggleAP, "HaggleFailAP": HaggleFailAP, "HaggleFailPercent": HaggleFailPercent, "PriceRisePercent": PriceRisePercent, "PriceRiseDollars": PriceRiseDollars,
		"HaggleWinHeat": HaggleWinHeat, "HaggleFailHeat": HaggleFailHeat, "LowballShare": LowballShare,
		"BurnHeat": BurnHeat, "BurnFine": BurnFine,
		"SpyAP": SpyAP, "StealAP": StealAP, "CaseTicks": CaseTicks, "BlindDefence": BlindDefence,
		"MaxPostRunes": MaxPostRunes, "PostCooldownSeconds": int(PostCooldown / time.Second),
		"MessageBurst": MessageBurst, "MessageEverySeconds": int(MessageEvery / time.Second), "KeepMessageAlerts": KeepMessageAlerts,
		"RoundTop": RoundTop, "KeepNews": KeepNews, "KeepFeed": KeepFeed, "KeepPosts": KeepPosts,
		"KeepReports": KeepReports, "MaxBatch": MaxBatch, "KeepMessages": KeepMessages, "HallCareers": HallCareers, "DigestLines": DigestLines,
		"MaxCash": MaxCash, "DailyInflation": DailyInflation, "AuctionTicks": AuctionTicks, "AuctionShare": AuctionShare,
		"AuctionMinBid": AuctionMinBid, "GrandLot": GrandLot, "LastAuctionCashPercent": LastAuctionCashPercent, "StealCooldown": StealCooldown,
		"TrapAP": TrapAP, "TrapCost": TrapCost, "TrapDefence": TrapDefence, "TrapAgents": 1 + TrapCatch,
		"SweepAP": SweepAP, "SweepCost": SweepCost, "SweepTicks": SweepTicks, "SweepDefence": SweepDefence,
		"OddsTable": oddsTable(), "DisclosureTable": DisclosureTable(),
	}
}

// oddsTable is the Markdown table of SpyOdds (which RULES.md says equal
// StealOdds) by agents and security.
func oddsTable() string {
	var b strings.Builder
	b.WriteString("| agents \\ security |")
	for s := 1; s <= oddsSecurity; s++ {
		fmt.Fprintf(&b, " %d |", s)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|", oddsSecurity))
	for a := 1; a <= oddsAgents; a++ {
		fmt.Fprintf(&b, "\n| %d |", a)
		for s := 1; s <= oddsSecurity; s++ {
			fmt.Fprintf(&b, " %s |", Percent(SpyOdds(a, s)))
		}
	}
	return b.String()
}

// TestRulesMD checks RULES.md is RULES.md.tmpl rendered with the game's
// constants, so the numbers it quotes are the numbers the server plays;
// -update rewrites it. It also checks the template quotes no number of its
// own (every figure must come from a constant).
func TestRulesMD(t *testing.T) {
	src, err := os.ReadFile("RULES.md.tmpl")
	require.NoError(t, err)
	tmpl := template.Must(template.New("RULES.md").Option("missingkey=error").Parse(string(src)))
	var out bytes.Buffer
	require.NoError(t, tmpl.Execute(&out, rulesData()))
	if *update {
		require.NoError(t, os.WriteFile("RULES.md", out.Bytes(), 0o644))
	}
	got, err := os.ReadFile("RULES.md")
	require.NoError(t, err)
	assert.Equal(t, out.String(), string(got), "RULES.md is stale: run go test ./game -run TestRulesMD -update and read the diff")

	// Outside {{...}}, only the structural ones: "+1 agent", "1d6", "1/N", "1 to N characters".
	prose := regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllString(string(src), "")
	prose = regexp.MustCompile(`\+1 |\b1d6\b|\b1/|\b1 to `).ReplaceAllString(prose, "")
	assert.Empty(t, regexp.MustCompile(`.*\d.*`).FindAllString(prose, -1), "numbers in RULES.md.tmpl must come from constants")
}

// TestOdds checks the contest odds against hand-counted rolls of two dice,
// and that spying and stealing make the same roll, as RULES.md says, but
// for the blind thief's BlindDefence and, in a game of DuoTable players,
// the security counted DuoSecurity times.
func TestOdds(t *testing.T) {
	for _, tc := range []struct {
		agents, security int
		wins             int // of the 36 rolls
	}{
		{1, 1, 15}, {2, 1, 21}, {3, 1, 26}, {6, 1, 35}, {7, 1, 36}, {1, 2, 10}, {1, 6, 0}, {2, 6, 1}, {6, 6, 15},
	} {
		assert.InDelta(t, float64(tc.wins)/36, SpyOdds(tc.agents, tc.security), 1e-9, "%d agents, security %d", tc.agents, tc.security)
	}
	for a := 0; a <= oddsAgents; a++ {
		for s := 0; s <= oddsSecurity; s++ {
			assert.Equal(t, SpyOdds(a, s), StealOdds(a, s, true, 3), "%d agents, security %d, cased", a, s)
			assert.Equal(t, SpyOdds(a, s+BlindDefence), StealOdds(a, s, false, 3), "%d agents, security %d, blind", a, s)
			// In a game of DuoTable players, the security counts DuoSecurity times, the additions once.
			assert.Equal(t, SpyOdds(a, DuoSecurity*s), StealOdds(a, s, true, DuoTable), "%d agents, security %d, cased, head to head", a, s)
			assert.Equal(t, SpyOdds(a, DuoSecurity*s+BlindDefence), StealOdds(a, s, false, DuoTable), "%d agents, security %d, blind, head to head", a, s)
		}
	}
	assert.Equal(t, []string{"0%", "1%", "3%", "50%", "99%", "100%"},
		[]string{Percent(0), Percent(0.004), Percent(1.0 / 36), Percent(0.5), Percent(0.999), Percent(1)})
	assert.Equal(t, [4]float64{1, 1, 0.5, 0}, [4]float64{HaggleOdds(300, 300), HaggleOdds(400, 300), HaggleOdds(150, 300), HaggleOdds(0, 300)})
}
