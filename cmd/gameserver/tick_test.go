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

// Ensure the tick scheduler runs a payday paid in steps one step a call,
// tickStepGap apart, and waits for the next tick after the last.
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
	now = now.Add((game.PayTicks - 1) * interval)
	assert.Greater(t, tickStep(store, interval, logger), tickStepGap, "ticks before the payday: one step each")

	now = now.Add(interval) // the payday: 5 players, 2 a step
	var waits []time.Duration
	for range 10 {
		w := tickStep(store, interval, logger)
		waits = append(waits, w)
		if w != tickStepGap {
			break
		}
	}
	assert.Equal(t, []time.Duration{tickStepGap, tickStepGap, tickStepGap}, waits[:len(waits)-1], "three slices")
	assert.Greater(t, waits[len(waits)-1], tickStepGap, "then the rest of the tick, and the wait for the next")
	c, err := store.Clock(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(game.PayTicks), c.Tick)
}
