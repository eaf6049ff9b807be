package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// Ensure the tick scheduler runs a payday paid in steps, and each tick's
// prune, one step a call, tickStepGap apart, and waits for the next tick
// after the last.
func TestTickStepPaysInSteps(t *testing.T) {
	ctx := context.Background()
	const interval = time.Minute
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	store, err := game.Open(filepath.Join(t.TempDir(), "game.db"), game.Options{
		TickInterval: interval, PaySlice: 2, BcryptCost: bcrypt.MinCost,
		Now: func() time.Time { return now },
	})
	require.NoError(t, err)
	defer store.Close()
	for i := range 5 {
		_, err := store.Register(ctx, fmt.Sprintf("agent%d", i), "password1", game.FBI)
		require.NoError(t, err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	now = now.Add(interval)
	steps(store, interval, logger) // the first prune of the database: a history a step
	now = now.Add((game.PayTicks - 2) * interval)
	assert.Equal(t, []time.Duration{tickStepGap, tickStepGap}, steps(store, interval, logger),
		"the ticks before the payday: one step, then their prune's two")

	now = now.Add(interval) // the payday: 5 players, 2 a step
	assert.Equal(t, []time.Duration{tickStepGap, tickStepGap, tickStepGap, tickStepGap, tickStepGap}, steps(store, interval, logger),
		"three slices, then the rest of the tick, then its prune")
	c, err := store.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(game.PayTicks), c.Tick)
}

// steps calls tickStep until it says to wait for the next tick (more than
// tickStepGap), ten times at most, and returns the waits before.
func steps(store *game.Store, interval time.Duration, logger *slog.Logger) []time.Duration {
	var waits []time.Duration
	for range 10 {
		w := tickStep(store, interval, logger)
		if w > tickStepGap {
			break
		}
		waits = append(waits, w)
	}
	return waits
}
