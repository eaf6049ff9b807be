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
	assert.Less(t, p.size(p.firstCost(true), liveShareBudget), p.size(p.firstCost(false), liveShareBudget),
		"a tick's first share is the smaller")

	assert.True(t, carriesFigures([]game.Change{{Kind: game.ChangePost}, {Kind: game.ChangeTick}}))
	assert.True(t, carriesFigures([]game.Change{{Kind: game.ChangeFeed, PlayerID: 1}}))
	assert.False(t, carriesFigures([]game.Change{{Kind: game.ChangePost}, {Kind: game.ChangeTick, Gone: true}}))
}

func TestLivePacerWrite(t *testing.T) {
	// Ensure a stream's write is estimated by the median gap per stream
	// between a share's end and the start of the next one's turn, not by
	// the least (which left out most of the writes), nor counting the work
	// of that turn before the share; and that a share takes what is left
	// of its turn's budget.
	var p livePacer
	assert.Zero(t, p.write(), "before any share")
	end := time.Now()
	for _, per := range []time.Duration{8, 14, 13, 40, 15, 12, 14, 16} { // us a stream
		p.lastEnd, p.lastN, p.awaited = end, 100, true
		p.begin(end.Add(per * 100 * time.Microsecond))
	}
	assert.Equal(t, 14*time.Microsecond, p.write())
	p.end(100, false, time.Microsecond)
	p.awaited = true
	p.begin(p.lastEnd.Add(-time.Millisecond)) // a turn that began before the share ended: no gap
	assert.Equal(t, 14*time.Microsecond, p.write())
	p.end(100, false, time.Microsecond)
	p.skip()
	p.awaited = true
	p.begin(p.lastEnd.Add(time.Second / 10)) // put off a turn: no gap
	assert.Equal(t, 14*time.Microsecond, p.write())

	full, half := p.size(time.Microsecond, liveShareBudget), p.size(time.Microsecond, liveShareBudget/2)
	assert.Equal(t, int(liveShareBudget/(15*time.Microsecond)), full)
	assert.InDelta(t, full/2, half, 1, "half the turn left")
	assert.Equal(t, liveShareMin, p.size(time.Microsecond, -time.Millisecond), "the least share, however late")
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
