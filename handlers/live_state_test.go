package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// The state an open page shows live, beyond lines and figures: standings
// (the ranking, who is protected), heat, the tick's interval, the round's end.

// data decodes the data of the last of evs, which must be of kind.
func data(t *testing.T, evs []testkit.Event, kind string) map[string]any {
	t.Helper()
	ev := evs[len(evs)-1]
	require.Equal(t, kind, ev.Event)
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &d), ev.Data)
	return d
}

// aliceWatches starts a served game with alice's stream open past its
// hello, and returns it with the server's base URL and alice's tid.
func aliceWatches(t *testing.T) (e *env, base string, s *testkit.EventStream, aliceTID string) {
	t.Helper()
	e = newEnv(t)
	_, aliceTID = e.player("alice", game.FBI)
	base = serveLoop(t, e)
	s = openStream(t, base+"/game/events?tid="+aliceTID, "")
	require.Equal(t, "hello", s.Next(t).Event)
	return e, base, s, aliceTID
}

// buyAt has the player of session tid buy a Secret from src at its price,
// through the Sources page.
func buyAt(t *testing.T, e *env, base, tid string, src game.Source) {
	t.Helper()
	resp, body := e.remoteClient(base).act("/game?function=sources&tid="+tid, url.Values{"function": {"haggle"},
		"source": {strconv.FormatInt(src.ID, 10)}, "offer": {strconv.Itoa(src.Price)}, "price": {strconv.Itoa(src.Price)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
}

func TestLiveStanding(t *testing.T) {
	// Ensure a change to what the ranking shows of a player reaches every
	// stream as a player event with their public standing only (no cash,
	// AP, agents or security: those are for spies), and a source event carries
	// the heat the Sources page shows.
	e, base, s, _ := aliceWatches(t)
	bob, bobTID := e.player("bob", game.MIB)
	src := cheapest(t, e)
	buyAt(t, e, base, bobTID, src)

	got := map[string]map[string]any{}
	for len(got) < 2 {
		ev := s.Next(t)
		if ev.Event == "player" || ev.Event == "source" {
			got[ev.Event] = data(t, []testkit.Event{ev}, ev.Event)
		}
	}
	now := e.stats(bob.ID)
	assert.Equal(t, map[string]any{"id": float64(bob.ID), "name": "bob", "faction": "MIB", "secrets": float64(1),
		"protectedUntil": float64(now.ProtectedUntil)}, got["player"])
	after, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	assert.Equal(t, float64(game.HaggleWinHeat), got["source"]["heat"], "the sale warmed the source")
	assert.Equal(t, float64(after[slices.IndexFunc(after, func(o game.Source) bool { return o.ID == src.ID })].Price), got["source"]["price"])
}

func TestRankingShowsNoCash(t *testing.T) {
	// Ensure another player's cash never reaches a player through the
	// ranking, neither its page (rows and faction totals) nor the live
	// player event that redraws a row: only a spy's dossier tells it, so
	// spying earns its AP (issue 17). bob's cash, after buying from the
	// $240 source, is a figure nothing else on the ranking shows.
	e, base, s, aliceTID := aliceWatches(t)
	bob, bobTID := e.player("bob", game.MIB)
	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	var src game.Source
	for _, o := range sources {
		if o.Name == "Crop Circle Farmer" {
			src = o
		}
	}
	require.Equal(t, 240, src.Price)
	buyAt(t, e, base, bobTID, src)
	cash := e.stats(bob.ID).Cash
	require.NotEqual(t, game.StartCash, cash, "bob paid for his Secret")

	ev := s.Until(t, "player")
	d := data(t, ev, "player")
	require.Equal(t, float64(bob.ID), d["id"])
	assert.NotContains(t, d, "cash")
	assert.NotContains(t, ev[len(ev)-1].Data, strconv.Itoa(cash), "bob's cash, under any name")

	_, page := e.client().get("/game?function=ranking&tid=" + aliceTID)
	start := strings.Index(page, `<div class="factions">`)
	end := strings.Index(page, "</tbody>")
	require.True(t, start >= 0 && end > start, page)
	table := strings.ReplaceAll(page[start:end], aliceTID, "TID")
	require.Contains(t, table, `data-name="bob"`)
	assert.NotContains(t, table, "$", "no cash figure in the totals or the rows")
	assert.NotContains(t, table, strconv.Itoa(cash))
	assert.NotContains(t, table, `data-standing="cash"`)
	assert.NotContains(t, table, `data-total="cash"`)
	assert.NotContains(t, page, "$"+strconv.Itoa(cash), "nowhere on alice's page")
}

func TestLiveTickCarriesProtection(t *testing.T) {
	// Ensure a tick tells the page the interval between ticks and the
	// viewer's protection from theft, so HQ's protection line can count
	// down and go when it ends (it stayed "until tick 111 (in 2 min)" into
	// the next round).
	e := newEnv(t)
	alice, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+tid, "")
	require.Equal(t, "hello", s.Next(t).Event)
	e.clock.Add(game.DefaultTickInterval)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	d := data(t, s.Until(t, "tick"), "tick")
	assert.Equal(t, float64(game.DefaultTickInterval.Milliseconds()), d["interval"])
	me := d["me"].(map[string]any)
	assert.Equal(t, float64(alice.ProtectedUntil), me["protectedUntil"])
}

func TestLiveRoundEnd(t *testing.T) {
	// Ensure the round's end reaches each player's open page as an alert
	// on the wire with their place, and the tick of the new round (at
	// which an open ranking reloads its table); no player event per
	// player, which would make N squared messages. Level on Secrets, they
	// share first place: neither the names nor alice's $100 less (cash is
	// private, a dossier's) break the tie.
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = 2 })
	alice, aliceTID := e.player("alice", game.FBI)
	_, bobTID := e.player("bob", game.MIB)
	_, err := e.store.Act(t.Context(), alice.ID, game.Action{Kind: game.Recruit}) // $100 down
	require.NoError(t, err)
	// Both under the broker's least bid ($0 and $100), which the round's
	// last auction would otherwise bid for them (game.LastAuctionCashPercent).
	e.exec(`UPDATE players SET cash = cash - 200`)
	base := serveLoop(t, e)
	streams := map[string]*testkit.EventStream{"alice": openStream(t, base+"/game/events?tid="+aliceTID, ""),
		"bob": openStream(t, base+"/game/events?tid="+bobTID, "")}
	for _, s := range streams {
		require.Equal(t, "hello", s.Next(t).Event)
	}
	e.clock.Add(2 * game.DefaultTickInterval)
	_, err = e.store.Tick(t.Context())
	require.NoError(t, err)

	for who, place := range map[string]string{"alice": "joint 1st", "bob": "joint 1st"} {
		var alert string
		var round any
		players := 0
		for alert == "" || round == nil {
			ev := streams[who].Next(t)
			switch d := data(t, []testkit.Event{ev}, ev.Event); ev.Event {
			case "feed":
				if d["alert"] == true {
					alert = d["text"].(string)
				}
			case "player":
				players++
			case "tick":
				round = d["round"]
			}
		}
		assert.Contains(t, alert, "Round 1 is over: you placed "+place+" of 2", who)
		assert.Zero(t, players, who)
		assert.Equal(t, float64(2), round)
	}
}

func TestLiveStandingsCoalesced(t *testing.T) {
	// Ensure the standings reach a page that shows them at most once a
	// LiveStateInterval, each player's latest, however many orders changed
	// them, while what a player needs at once (the news of the orders, an
	// alert on their wire) does not wait for them.
	e := newEnv(t)
	alice, aliceTID := e.player("alice", game.FBI)
	bob, bobTID := e.player("bob", game.MIB)
	addr, soon, turn := serveEngineSoon(t, e.srv, nil, gameserver.Config{}) // no poll timer: the test polls
	base := "http://" + addr
	poll := func() {
		done := make(chan struct{})
		soon(func() { e.srv.SetLiveSoon(soon); e.srv.SetLiveTurn(turn); e.srv.PollLive(t.Context()); close(done) })
		<-done
	}
	poll() // the enlistments' standings go out, to nobody
	s := openStream(t, base+"/game/events?tid="+aliceTID+"&view=ranking", "")
	require.Equal(t, "hello", s.Next(t).Event)

	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	sources = slices.Clone(sources) // the store's is shared: not to be sorted in place
	slices.SortFunc(sources, func(a, b game.Source) int { return a.Price - b.Price })
	// bob buys from the two cheapest, with cash enough for both.
	e.exec(`UPDATE players SET cash = 5000 WHERE id = ?`, bob.ID)
	for _, src := range sources[:2] {
		buyAt(t, e, base, bobTID, src)
		require.Equal(t, "news", s.Next(t).Event, "the news of the buy comes at once")
	}
	select {
	case ev := <-s.Events:
		t.Fatalf("%s before the state flush", ev.Event)
	case <-time.After(handlers.LiveStateInterval):
	}
	poll()
	standing := s.Next(t)
	require.Equal(t, "player", standing.Event)
	assert.Empty(t, standing.ID, "a coalesced change has no id")
	assert.Equal(t, float64(e.stats(bob.ID).Secrets), data(t, []testkit.Event{standing}, "player")["secrets"], "bob's latest")
	assert.Equal(t, float64(2), data(t, []testkit.Event{standing}, "player")["secrets"])

	resp, body := e.remoteClient(base).act("/game?function=dossiers&tid="+bobTID,
		url.Values{"function": {"spy"}, "target": {strconv.FormatInt(alice.ID, 10)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	for ev := s.Next(t); ev.Event != "feed"; ev = s.Next(t) {
		assert.NotEqual(t, "player", ev.Event, "only one standing a flush")
	}
}
