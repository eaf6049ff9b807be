package handlers

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/game"
)

func TestLivePacerFirstCost(t *testing.T) {
	// Ensure the first share of a run is sized by what a stream cost in
	// the last share of a run of its kind (with the players' figures or
	// without), not by one guess for both: a tick's streams cost several
	// times a post's.
	var p livePacer
	assert.Equal(t, liveFirstCost, p.firstCost(false), "before any share")
	assert.Equal(t, liveFirstFiguresCost, p.firstCost(true), "before any share")
	p.end(100, true, 35*time.Microsecond)
	p.end(100, false, 3*time.Microsecond)
	assert.Equal(t, 35*time.Microsecond, p.firstCost(true), "the last tick's share")
	assert.Equal(t, 3*time.Microsecond, p.firstCost(false), "the last post's share")
	assert.Less(t, p.size(p.firstCost(true)), p.size(p.firstCost(false)), "a tick's first share is the smaller")

	assert.True(t, carriesFigures([]game.Change{{Kind: game.ChangePost}, {Kind: game.ChangeTick}}))
	assert.True(t, carriesFigures([]game.Change{{Kind: game.ChangeFeed, PlayerID: 1}}))
	assert.False(t, carriesFigures([]game.Change{{Kind: game.ChangePost}, {Kind: game.ChangeTick, Gone: true}}))
}

func TestLiveJobStreams(t *testing.T) {
	// Ensure a run of changes goes to exactly the streams that read any of
	// them, whether it is found through the players' streams (feed lines
	// alone) or by a pass over every stream.
	h := newLiveHub(nil, nil, time.Now)
	views := []liveView{0, showsStandings, showsSources}
	for i := range 60 {
		faction := game.FBI
		if i%2 == 1 {
			faction = game.MIB
		}
		cl := &liveClient{player: int64(1 + i%20), faction: faction, sid: fmt.Sprint(i), addr: "a", shows: views[i%3]}
		h.add(cl)
	}
	forgotten := h.byPlayer[3][0]
	h.forget(forgotten)
	feed := func(player int64) game.Change {
		return game.Change{Kind: game.ChangeFeed, PlayerID: player, Event: &game.Event{}}
	}
	for name, changes := range map[string][]game.Change{
		"feed lines":         {feed(3), feed(7)},
		"a feed line, gone":  {feed(3), {Kind: game.ChangeFeed, PlayerID: 4, Gone: true}},
		"feed and news":      {feed(3), {Kind: game.ChangeNews, Event: &game.Event{}}},
		"feed and a faction": {feed(3), {Kind: game.ChangePost, Post: &game.Post{FactionOnly: true, Faction: game.MIB}}},
		"feed and standings": {feed(3), {Kind: game.ChangePlayer, Player: &game.Player{ID: 9}}},
		"no one's":           {feed(99)},
	} {
		a := audienceOf(changes)
		var want []*liveClient
		for cl := range h.clients {
			if a.reads(cl) {
				want = append(want, cl)
			}
		}
		got := h.newJob(changes, 0, false).to
		assert.ElementsMatch(t, want, got, name)
		assert.NotContains(t, got, forgotten, name)
	}
}
