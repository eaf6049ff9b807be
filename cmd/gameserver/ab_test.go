package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeedBenchmarksWithAB(t *testing.T) {
	// Ensure the seed's two invocations, ab -n 1000 -c 12 on the static front
	// page and on the dynamic hq page addressed by tid, finish with no failed
	// request and a 200 page of the length a single GET returns.
	db := filepath.Join(t.TempDir(), "ss.db")
	tid := mustNewPlayer(t, db, "scully")
	p := startProgram(t, "-db", db)
	for _, path := range []string{"/", "/game?function=hq&tid=" + tid} {
		t.Run(path, func(t *testing.T) {
			resp, body := get(t, p.base+path)
			require.Equal(t, 200, resp.StatusCode)
			r := testkit.ParseAB(t, testkit.RunAB(t, 2*time.Minute, "-n", "1000", "-c", "12", p.base+path))
			assert.Equal(t, testkit.ABFigures{Complete: 1000, DocLength: int64(len(body))},
				testkit.ABFigures{Complete: r.Complete, Failed: r.Failed, Non2xx: r.Non2xx, DocLength: r.DocLength})
		})
	}
}
