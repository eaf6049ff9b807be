package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/internal/dblock"
	"github.com/statesecrets/server/loadtest"
)

func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(testContext(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBadFlags(t *testing.T) {
	// Ensure a bad command line gets exit status 2 and a message naming
	// the flag at fault.
	tids := filepath.Join(t.TempDir(), "tids")
	require.NoError(t, os.WriteFile(tids, []byte("a\nb\n"), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-prepare", "3"}, "-prepare needs -db"},
		{[]string{"http://127.0.0.1:1"}, "give -tids FILE or -register"},
		{[]string{"-register", "-ramp", "x", "http://127.0.0.1:1"}, "-ramp wants A:B"},
		{[]string{"-tids", tids, "-ramp", "0:5", "http://127.0.0.1:1"}, "has 2 sessions; the schedule brings 5"},
		{[]string{"-register", "-stop-when", "page.p42<1ms", "http://127.0.0.1:1"}, "unknown metric"},
		{[]string{"-register"}, "want one URL"},
	} {
		code, _, stderr := runCLI(tc.args...)
		assert.Equal(t, 2, code, strings.Join(tc.args, " "))
		assert.Contains(t, stderr, tc.want, strings.Join(tc.args, " "))
	}
}

func TestPrepare(t *testing.T) {
	// Ensure -prepare seeds a fresh game and prints a session id (32 hex
	// digits) for each player.
	db := filepath.Join(t.TempDir(), "g.db")
	code, stdout, stderr := runCLI("-prepare", "5", "-db", db)
	require.Equal(t, 0, code, stderr)
	lines := strings.Fields(stdout)
	require.Len(t, lines, 5)
	for _, l := range lines {
		assert.Regexp(t, `^[0-9a-f]{32}$`, l)
	}
}

func TestPrepareBesideServer(t *testing.T) {
	// Ensure -prepare beside a server on its database (here this process,
	// holding the database's lock as a server does) is refused, naming the
	// flag and the server's pid, and writes nothing: not the players, not
	// the ticks a fresh Store would catch up.
	db := filepath.Join(t.TempDir(), "g.db")
	code, _, stderr := runCLI("-prepare", "2", "-db", db)
	require.Equal(t, 0, code, stderr)
	lock, err := dblock.Take(db, 1)
	require.NoError(t, err)
	defer lock.Close()
	before, err := os.ReadFile(db)
	require.NoError(t, err)

	code, stdout, stderr := runCLI("-prepare", "5", "-db", db)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "players: -prepare: -db "+db+": another server (pid "+strconv.Itoa(os.Getpid())+")")
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the database changed")
	assert.NoFileExists(t, db+"-wal", "nothing written")
}

func TestCapacityLine(t *testing.T) {
	// Ensure the capacity line names the players of the last window that
	// held, with that window's figures (events over it and the one
	// before), and what broke after it.
	res := &loadtest.UsersResult{Broke: "page.p99<=50ms (page: 80.00 ms)", BrokeAt: 2, Windows: []loadtest.Window{
		{Active: 100, Length: 5e9, Events: 500, ServerRequests: 40, Loop: &loadtest.LoopFigures{Utilization: 0.2}},
		{Active: 200, Length: 5e9, Events: 1000, ServerRequests: 80, LongestTurnRecent: 12e6, Loop: &loadtest.LoopFigures{Utilization: 0.4}},
		{Active: 300},
	}}
	assert.Equal(t, "capacity: 200 players (engine loop, 80 req/s, 150 events/s, loop 40%, longest turn 12.0 ms, then page.p99<=50ms (page: 80.00 ms))",
		capacityLine("loop", res))
}

func testContext() context.Context { return context.Background() }
