package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLessons(t *testing.T) {
	// Ensure -seed-players fills the world and says so, and a server with
	// the teaching switches warns at start, before it serves, and serves
	// the seeded world.
	db := filepath.Join(t.TempDir(), "ss.db")
	tid := mustNewPlayer(t, db, "mulder")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-db", db, "-seed-players", "60"}, &out, io.Discard))
	assert.Regexp(t, `^seeded 60 players, 600 feed lines, 180 dossiers, 200 news lines and 200 board posts in [\d.]+ s\n$`, out.String())

	p := startProgram(t, "-db", db, "-hash-on-loop", "-no-read-cache")
	log := p.stderr.String()
	warn := strings.Index(log, `level=WARN msg="teaching switch set`)
	require.GreaterOrEqual(t, warn, 0, log)
	assert.Contains(t, log[warn:], `switches="-hash-on-loop -no-read-cache"`)
	assert.Less(t, warn, strings.Index(log, "msg=serving"), "the warning comes first")
	resp, body := get(t, p.base+"/game?function=ranking&page=2&tid="+tid)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "agent00", "the ranking's second page holds seeded players")
}
