package handlers

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

func TestLiveHubPollIfMoved(t *testing.T) {
	// Ensure a stream's open skips the change log only while nothing was
	// written since the last poll read it to its end: a write moves the
	// cursor on at the next open.
	ctx := context.Background()
	store, err := game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{BcryptCost: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	h := newLiveHub(store, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	h.pollIfMoved(ctx)
	require.True(t, h.polled)
	before := h.cursor
	assert.Equal(t, store.Version(), h.polledAt)

	p, err := store.Register(ctx, "alice", "password-alice", game.FBI)
	require.NoError(t, err)
	_, err = store.Act(ctx, p.ID, game.Action{Kind: game.Recruit})
	require.NoError(t, err)
	require.NotEqual(t, store.Version(), h.polledAt)
	h.pollIfMoved(ctx)
	assert.Greater(t, h.cursor, before, "the recruit's changes")
	assert.Equal(t, store.Version(), h.polledAt)
}
