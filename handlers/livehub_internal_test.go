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

func TestLiveHubMissedState(t *testing.T) {
	// Ensure a stream resuming after lastID is sent the coalesced changes
	// read before lastID that went out in the first state flush after it
	// was read (it may have gone by then), and no others: those of earlier
	// flushes it had, later ones come in its catch-up or the next flush.
	change := func(id int64) game.Change {
		return game.Change{ID: id, Kind: game.ChangePlayer, Player: &game.Player{ID: id}}
	}
	h := &liveHub{flushes: []liveFlush{
		{mark: 10, changes: []game.Change{change(5), change(8)}},
		{mark: 20, changes: []game.Change{change(12), change(18)}},
		{mark: 30, changes: []game.Change{change(25)}},
	}}
	ids := func(cs []game.Change) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for lastID, want := range map[int64][]int64{3: nil, 10: {5, 8}, 15: {12}, 20: {12, 18}, 21: nil, 31: nil} {
		assert.Equal(t, want, ids(h.missedState(lastID)), "after %d", lastID)
	}
}
