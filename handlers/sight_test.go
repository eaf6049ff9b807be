package handlers_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// secrets are what a test gave one player that the rules on information
// (game.Disclose) may keep from others: for each figure, the values and
// texts that would give it away.
type secrets map[game.Figure][]string

// add records value as a give-away of figure f.
func (s secrets) add(f game.Figure, values ...any) {
	for _, v := range values {
		s[f] = append(s[f], fmt.Sprint(v))
	}
}

// leaks returns what of s, of the figures a viewer in relation r may not
// see as they stand (game.Live), body holds: a number as a whole word
// (not inside a token or a hash), a text as it is.
func (s secrets) leaks(r game.Relation, body string) []string {
	var found []string
	for f, values := range s {
		if game.Disclose(r, f).Has(game.Live) {
			continue
		}
		for _, v := range values {
			re := regexp.QuoteMeta(v)
			if regexp.MustCompile(`^\d+$`).MatchString(v) {
				re = `\b` + re + `\b`
			}
			if regexp.MustCompile(re).MatchString(body) {
				found = append(found, fmt.Sprintf("%s %q", f, v))
			}
		}
	}
	return found
}

// requireCovered fails unless s has a give-away of every figure a viewer
// in relation r may not see as it stands: a figure added to the table
// needs one here, or the walk would not look for it.
func (s secrets) requireCovered(t *testing.T, r game.Relation) {
	t.Helper()
	for _, f := range game.Figures() {
		if !game.Disclose(r, f).Has(game.Live) {
			require.NotEmpty(t, s[f], "no give-away of %s, hidden from a %s", f, r)
		}
	}
}

// gamePageTargets are the URLs of every game page (handlers.GamePages)
// for the viewer tid, those that name a player naming each of others; and
// the pages outside /game.
func gamePageTargets(t *testing.T, tid string, others ...string) []string {
	t.Helper()
	targets := []string{"/", "/rules?tid=" + tid}
	for _, fn := range handlers.GamePages() {
		base := "/game?function=" + fn + "&tid=" + tid
		switch fn {
		case "profile":
			for _, o := range others {
				targets = append(targets, base+"&name="+o)
			}
		case "messages":
			targets = append(targets, base)
			for _, o := range others {
				targets = append(targets, base+"&with="+o)
			}
		default:
			targets = append(targets, base, base+"&page=2")
		}
	}
	return targets
}

// walk gets every page as the viewer tid, in relation r to the player of
// s, and fails on any give-away of what r may not see; it returns the
// pages by URL.
func walk(t *testing.T, e *env, tid string, r game.Relation, s secrets, others ...string) map[string]string {
	t.Helper()
	s.requireCovered(t, r)
	c := e.client()
	pages := map[string]string{}
	for _, target := range gamePageTargets(t, tid, others...) {
		resp, body := c.get(target)
		require.Equal(t, http.StatusOK, resp.StatusCode, target)
		assert.Empty(t, s.leaks(r, body), "%s shows a %s what the rules keep from them", target, r)
		pages[target] = body
	}
	return pages
}

// TestRulesOnInformation walks every page and every live event as a
// rival, and as a teammate, of an agent whose covert figures, wire,
// messages and channel post are all distinctive, and fails on any the
// rules (game.Disclose) keep from them: before any spy, and after a
// successful one, when the dossier and the report may show the figures
// as they stood then, but never as they stand now.
func TestRulesOnInformation(t *testing.T) {
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = 3 })
	scully, tid := e.player("scully", game.FBI) // the rival
	krycek, _ := e.player("krycek", game.MIB)
	_, stid := e.player("spender", game.MIB) // krycek's teammate
	e.player("skinner", game.FBI)
	ctx := t.Context()

	// Round 1 ends with krycek's final standing public: the hall and the news show it.
	// Cash under the broker's least bid, which the round's last auction
	// would otherwise bid (game.LastAuctionCashPercent).
	e.exec(`UPDATE players SET cash = 0`)
	e.exec(`UPDATE players SET secrets = 2, cash = 157 WHERE id = ?`, krycek.ID)
	e.clock.Add(3 * game.DefaultTickInterval)
	_, err := e.store.Tick(ctx)
	require.NoError(t, err)

	// Round 2: figures nobody else may see as they stand.
	e.exec(`UPDATE players SET cash = 7919, agents = 4111, security = 4127, ap = 4133, secrets = 3,
		unread_messages = 4139, unread_faction = 4153, trap = 1, sweep_until = 4157, bid = 4159, lie_low_until = 4163
		WHERE id = ?`, krycek.ID)
	e.exec(`INSERT INTO events (tick, at, player_id, public, text) VALUES (3, 0, ?, 0, 'On the wire: the black oil is in the hold.')`,
		krycek.ID)
	base := serveLoop(t, e)
	watch := map[string]*testkit.EventStream{"rival": openStream(t, base+"/game/events?tid="+tid, ""),
		"teammate": openStream(t, base+"/game/events?tid="+stid, "")}
	for _, st := range watch {
		require.Equal(t, "hello", st.Next(t).Event)
	}
	src := sourceNamed(t, e, "Area 51 Janitor")
	for _, a := range []game.Action{
		{Kind: game.Recruit},
		{Kind: game.Haggle, SourceID: src.ID, Offer: src.Price, Price: src.Price},
		{Kind: game.PostMessage, Body: "MIB eyes only: the ferry leaves at dawn.", FactionOnly: true},
		{Kind: game.Message, To: "skinner", Body: "To skinner: the package is in Tunisia."},
	} {
		_, err := e.store.Act(ctx, krycek.ID, a)
		require.NoError(t, err, a.Kind)
	}
	cash := 7919 - game.RecruitCost - src.Price
	s := secrets{}
	s.add(game.FigureCash, 7919, 7919-game.RecruitCost, cash)
	s.add(game.FigureAgents, 4111, 4112)
	s.add(game.FigureSecurity, 4127)
	s.add(game.FigureAP, 4133, 4133-game.RecruitAP, 4133-game.RecruitAP-game.HaggleAP)
	s.add(game.FigureUnread, 4139, 4153)
	s.add(game.FigureChannel, "MIB eyes only: the ferry leaves at dawn.")
	s.add(game.FigureWire, "On the wire: the black oil is in the hold.", "You recruited an agent", "You bought a Secret")
	s.add(game.FigureMessages, "To skinner: the package is in Tunisia.")
	s.add(game.FigureTrap, "trap set,") // as a dossier says it ("trap set, sweep until tick 4157, bid $4159")
	s.add(game.FigureSweep, 4157)
	s.add(game.FigureBid, 4159)
	s.add(game.FigureLieLow, 4163)

	t.Run("Rival", func(t *testing.T) {
		pages := walk(t, e, tid, game.Rival, s, "krycek", "spender")
		assert.Contains(t, pages["/game?function=hall&tid="+tid], "$157", "the final standing of round 1 is public")
		assert.Contains(t, pages["/game?function=profile&tid="+tid+"&name=krycek"], "Agent krycek")
		events := liveUntilMarker(t, e, watch["rival"], scully.ID, "rival's marker")
		assert.Empty(t, s.leaks(game.Rival, events), "the live stream tells a rival what the rules keep from them")
		assert.Contains(t, events, `"name":"krycek"`, "krycek's standing, live")
		assert.Contains(t, events, "krycek (MIB) bought a Secret", "the news, live")
	})
	t.Run("Teammate", func(t *testing.T) {
		pages := walk(t, e, stid, game.Teammate, s, "krycek", "scully")
		assert.Contains(t, pages["/game?function=board&tid="+stid], "MIB eyes only", "the side's channel")
		events := liveUntilMarker(t, e, watch["teammate"], scully.ID, "teammate's marker")
		assert.Empty(t, s.leaks(game.Teammate, events), "the live stream tells a teammate what the rules keep from them")
	})
	t.Run("AfterASpy", func(t *testing.T) {
		// A sure spy: scully's side now holds a dossier and scully a
		// report, with krycek's figures as they stood; then they move on.
		// The trap is lifted for the spy and set again after it, so that
		// the dossier says "no trap" and the trap set now is a secret.
		e.exec(`UPDATE players SET agents = 99999 WHERE id = ?`, scully.ID)
		e.exec(`UPDATE players SET trap = 0 WHERE id = ?`, krycek.ID)
		out, err := e.store.Act(ctx, scully.ID, game.Action{Kind: game.Spy, TargetID: krycek.ID})
		require.NoError(t, err)
		require.Contains(t, out.Text, "Your agents went through krycek's files")
		e.exec(`UPDATE players SET cash = 6007, agents = 6011, security = 6029, ap = 6037,
			trap = 1, sweep_until = 6043, bid = 6047 WHERE id = ?`, krycek.ID)
		now := secrets{}
		now.add(game.FigureCash, 6007)
		now.add(game.FigureAgents, 6011)
		now.add(game.FigureSecurity, 6029)
		now.add(game.FigureAP, 6037)
		now.add(game.FigureTrap, "trap set,")
		now.add(game.FigureSweep, 6043)
		now.add(game.FigureBid, 6047)
		changed := map[game.Figure]bool{game.FigureCash: true, game.FigureAgents: true, game.FigureSecurity: true,
			game.FigureAP: true, game.FigureTrap: true, game.FigureSweep: true, game.FigureBid: true}
		for f, v := range s {
			if !changed[f] {
				now[f] = v
			}
		}
		pages := walk(t, e, tid, game.Rival, now, "krycek", "spender")
		dossiers := pages["/game?function=dossiers&tid="+tid]
		assert.Contains(t, dossiers, fmt.Sprintf("$%d", cash), "the dossier: cash as the spy found it")
		assert.Contains(t, dossiers, ">4112<", "agents as the spy found them")
		assert.Contains(t, dossiers, "no trap, sweep until tick 4157, bid $4159", "trap, sweep and bid as the spy found them")
		assert.Contains(t, pages["/game?function=reports&tid="+tid], "4112 agents, security 4127", "the report: as the order found them")
	})
}

// liveUntilMarker has player poster post a public marker and returns the
// data of every event st received up to it.
func liveUntilMarker(t *testing.T, e *env, st *testkit.EventStream, poster int64, marker string) string {
	t.Helper()
	e.clock.Add(game.PostCooldown) // between two markers
	_, err := e.store.Act(t.Context(), poster, game.Action{Kind: game.PostMessage, Body: marker})
	require.NoError(t, err)
	var b strings.Builder
	for {
		ev := st.Next(t)
		fmt.Fprintf(&b, "%s %s\n", ev.Event, ev.Data)
		if ev.Event == "post" && strings.Contains(ev.Data, marker) {
			return b.String()
		}
	}
}

// sourceNamed returns the source called name.
func sourceNamed(t *testing.T, e *env, name string) game.Source {
	t.Helper()
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	for _, o := range sources {
		if o.Name == name {
			return o
		}
	}
	require.FailNow(t, "no source "+name)
	return game.Source{}
}
