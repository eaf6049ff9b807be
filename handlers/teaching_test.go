package handlers_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

func TestHashOnLoop(t *testing.T) {
	for _, onLoop := range []bool{false, true} {
		t.Run(map[bool]string{false: "Pool", true: "OnLoop"}[onLoop], func(t *testing.T) {
			// Ensure a login's bcrypt comparison runs on the engine's worker
			// pool, and under the teaching switch HashOnLoop on the loop
			// itself (the pool runs nothing), with the same answers.
			e := newEnv(t)
			e.player("mulder", game.FBI)
			h, err := handlers.New(e.store, handlers.Options{HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey,
				Now: e.clock.Now, HashOnLoop: onLoop})
			require.NoError(t, err)
			addr, srv := serveGameserver(t, h, nil, gameserver.Config{})
			base, client := "http://"+addr, clientFrom(net.IPv4(127, 0, 0, 1))
			require.NoError(t, login(client, base, "mulder", true))
			require.NoError(t, login(client, base, "mulder", false))
			if !onLoop {
				require.Eventually(t, func() bool { return srv.Stats().Work.Finished == 2 }, 5*time.Second, 10*time.Millisecond,
					"both comparisons on the pool")
				return
			}
			time.Sleep(50 * time.Millisecond) // a turn or two: the stats are published as a turn ends
			assert.Zero(t, srv.Stats().Work.Finished, "no work on the pool")
			assert.Zero(t, srv.Stats().Work.Running)
		})
	}
}
