package handlers

import (
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
