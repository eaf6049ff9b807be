//go:build !linux || gameserver_portable

package gameserver_test

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/internal/testkit"
)

func TestWaitUnknown(t *testing.T) {
	// Ensure the portable back end, which has no per-thread figures,
	// reports the wait attribution as unknown, not as zero: Known false,
	// no routes, no share, and "unknown" in the slow-request log.
	var logs testkit.LogBuffer
	addr, s := startServer(t, gameserver.Config{SlowRequest: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { spin(2 * time.Millisecond) })})
	c := dial(t, addr)
	for range 3 {
		resp, _ := c.get("/")
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	time.Sleep(50 * time.Millisecond) // longer than the summaries' refresh, were there any
	st := s.Stats()
	assert.Equal(t, uint64(3), st.Requests)
	assert.False(t, st.Wait.Known)
	assert.Zero(t, st.Wait.HeadOfLine.Samples)
	assert.Empty(t, st.WaitByRoute)
	_, ok := st.CPUWaitShare(gameserver.Stats{})
	assert.False(t, ok)
	slow := s.SlowRequests()
	require.NotEmpty(t, slow)
	assert.False(t, slow[0].Attributed)
	assert.Contains(t, logs.String(), "head_of_line=unknown cpu_wait=unknown")
}
