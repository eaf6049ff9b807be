package handlers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/game"
)

func TestPersonalIsLiveMessage(t *testing.T) {
	// Ensure the spliced encoding of a feed line or a tick for a player is
	// byte for byte what liveMessage encodes, and without figures too.
	at := time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)
	clock := game.Clock{Tick: 7, Round: 2, LastTick: at, Interval: 10 * time.Minute, RoundTicks: 100}
	me := &game.Player{ID: 3, AP: 4, Cash: -12, Agents: 2, Security: 9, Secrets: 1 << 40, ProtectedUntil: 11}
	for _, c := range []*game.Change{
		{ID: 41, Kind: game.ChangeFeed, PlayerID: 3, Alert: true, Event: &game.Event{Text: `a "quoted" <line>`, Tick: 7, At: at}},
		{ID: 42, Kind: game.ChangeTick, Clock: &clock},
	} {
		enc := personal(c)
		assert.Equal(t, string(liveMessage(c, me)), string(enc(me)), c.Kind)
		assert.Equal(t, string(liveMessage(c, nil)), string(enc(nil)), c.Kind)
	}
}
