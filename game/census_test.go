package game_test

import (
	"context"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStore_Census(t *testing.T) {
	// Ensure the census counts players and live sessions and reads the clock.
	ctx := context.Background()
	s := MustOpenStore(t)
	p := MustRegister(t, s, "erin", game.FBI)
	MustRegister(t, s, "finn", game.MIB)
	_, err := s.CreateSession(ctx, p.ID)
	require.NoError(t, err)
	s.Time.Add(Interval)
	_, err = s.Tick(ctx)
	require.NoError(t, err)
	c, err := s.Census(ctx)
	require.NoError(t, err)
	assert.Equal(t, game.Census{Players: 2, Sessions: 1, Tick: 1, Round: 1}, c)
	s.Time.Add(2 * time.Hour) // past the test sessions' one-hour lifetime
	c, err = s.Census(ctx)
	require.NoError(t, err)
	assert.Zero(t, c.Sessions, "an expired session is not counted")
}
