package handlers_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// The state an open page shows live, beyond lines and figures: standings
// (the ranking, who is protected), heat, the tick's interval, the round's end.

// data decodes the data of the last of evs, which must be of kind.
func data(t *testing.T, evs []sseEvent, kind string) map[string]any {
	t.Helper()
	ev := evs[len(evs)-1]
	require.Equal(t, kind, ev.Event)
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &d), ev.Data)
	return d
}

func TestLiveStanding(t *testing.T) {
	// Ensure a change to what the ranking shows of a player reaches every
	// stream as a player event with their public standing only (no AP,
	// agents or security: those are for spies), and a source event carries
	// the heat the Sources page shows.
	e := newEnv(t)
	_, aliceTID := e.player("alice", game.FBI)
	bob, bobTID := e.player("bob", game.MIB)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+aliceTID, "")
	require.Equal(t, "hello", s.next(t).Event)

	sources, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	src := sources[0]
	resp, body := e.remoteClient(base).act("/game?function=sources&tid="+bobTID, url.Values{"function": {"haggle"},
		"source": {strconv.FormatInt(src.ID, 10)}, "offer": {strconv.Itoa(src.Price)}, "price": {strconv.Itoa(src.Price)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)

	got := map[string]map[string]any{}
	for len(got) < 2 {
		ev := s.next(t)
		if ev.Event == "player" || ev.Event == "source" {
			got[ev.Event] = data(t, []sseEvent{ev}, ev.Event)
		}
	}
	now := e.stats(bob.ID)
	assert.Equal(t, map[string]any{"id": float64(bob.ID), "name": "bob", "faction": "MIB", "secrets": float64(1),
		"cash": float64(now.Cash), "protectedUntil": float64(now.ProtectedUntil)}, got["player"])
	after, err := e.store.Sources(t.Context())
	require.NoError(t, err)
	assert.Equal(t, float64(game.HaggleWinHeat), got["source"]["heat"], "the sale warmed the source")
	assert.Equal(t, float64(after[0].Price), got["source"]["price"])
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
	require.Equal(t, "hello", s.next(t).Event)
	e.clock.Add(game.DefaultTickInterval)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	d := data(t, s.until(t, "tick"), "tick")
	assert.Equal(t, float64(game.DefaultTickInterval.Milliseconds()), d["interval"])
	me := d["me"].(map[string]any)
	assert.Equal(t, float64(alice.ProtectedUntil), me["protectedUntil"])
}

func TestLiveRoundEnd(t *testing.T) {
	// Ensure the round's end reaches each player's open page as an alert
	// on the wire with their place, and the tick of the new round (at
	// which an open ranking reloads its table); no player event per
	// player, which would make N squared messages.
	e := newEnvWith(t, func(o *game.Options) { o.RoundTicks = 2 })
	alice, aliceTID := e.player("alice", game.FBI)
	_, bobTID := e.player("bob", game.MIB)
	_, err := e.store.Act(t.Context(), alice.ID, game.Action{Kind: game.Recruit}) // $100 down
	require.NoError(t, err)
	base := serveLoop(t, e)
	streams := map[string]*sseStream{"alice": openStream(t, base+"/game/events?tid="+aliceTID, ""),
		"bob": openStream(t, base+"/game/events?tid="+bobTID, "")}
	for _, s := range streams {
		require.Equal(t, "hello", s.next(t).Event)
	}
	e.clock.Add(2 * game.DefaultTickInterval)
	_, err = e.store.Tick(t.Context())
	require.NoError(t, err)

	for who, place := range map[string]string{"alice": "2nd", "bob": "1st"} {
		var alert string
		var round any
		players := 0
		for alert == "" || round == nil {
			ev := streams[who].next(t)
			switch d := data(t, []sseEvent{ev}, ev.Event); ev.Event {
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
