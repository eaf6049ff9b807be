package game_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestStore_PlayersByID(t *testing.T) {
	// Ensure the players asked for come back by id, once each however often
	// asked, and an id without a player is left out.
	ctx := context.Background()
	s := MustOpenStore(t)
	alice := MustRegister(t, s, "alice", game.FBI)
	bob := MustRegister(t, s, "bob", game.MIB)
	got, err := s.PlayersByID(ctx, []int64{alice.ID, bob.ID, alice.ID, 999})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "alice", got[alice.ID].Name)
	assert.Equal(t, bob.Cash, got[bob.ID].Cash)
	none, err := s.PlayersByID(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestStore_SessionOwners(t *testing.T) {
	// Ensure only valid sessions come back, with their players: not a
	// deleted one, an expired one, a malformed or an unknown id.
	ctx := context.Background()
	s := MustOpenStore(t)
	alice := MustRegister(t, s, "alice", game.FBI)
	bob := MustRegister(t, s, "bob", game.MIB)
	a, err := s.CreateSession(ctx, alice.ID)
	require.NoError(t, err)
	b, err := s.CreateSession(ctx, bob.ID)
	require.NoError(t, err)
	gone, err := s.CreateSession(ctx, bob.ID)
	require.NoError(t, err)
	require.NoError(t, s.DeleteSession(ctx, gone.ID))
	ids := []string{a.ID, b.ID, gone.ID, `"x`, "0123456789abcdef0123456789abcdef"}
	got, err := s.SessionOwners(ctx, ids)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{a.ID: alice.ID, b.ID: bob.ID}, got)

	s.Time.Add(time.Hour) // the sessions' lifetime
	got, err = s.SessionOwners(ctx, ids)
	require.NoError(t, err)
	assert.Empty(t, got, "expired")
}
