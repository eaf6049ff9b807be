package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

func testContext() context.Context { return context.Background() }

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureUsers reads the windows of a real make capacity run (schema
// version 2) into a UsersResult: what the capacity line reads.
func fixtureUsers(t *testing.T, path string) *loadtest.UsersResult {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var env struct {
		Results struct {
			Broke   string `json:"broke"`
			BrokeAt int    `json:"broke_at_window"`
			Windows []struct {
				Active      int     `json:"active"`
				Length      float64 `json:"length_s"`
				Events      int64   `json:"events"`
				Requests    float64 `json:"server_requests_per_second"`
				LongestTurn float64 `json:"longest_turn_recent_ms"`
				Loop        *struct {
					Utilization float64 `json:"utilization"`
					CPU         float64 `json:"cpu_ms"`
					Error       string  `json:"error"`
				} `json:"loop"`
			} `json:"windows"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	res := &loadtest.UsersResult{Broke: env.Results.Broke, BrokeAt: env.Results.BrokeAt}
	for _, w := range env.Results.Windows {
		win := loadtest.Window{Active: w.Active, Length: time.Duration(w.Length * float64(time.Second)), Events: w.Events,
			ServerRequests: w.Requests, LongestTurnRecent: time.Duration(w.LongestTurn*1000+0.5) * time.Microsecond}
		if w.Loop != nil {
			win.Loop = &loadtest.LoopFigures{Utilization: w.Loop.Utilization, CPU: time.Duration(w.Loop.CPU * float64(time.Millisecond)),
				Error: w.Loop.Error}
		}
		res.Windows = append(res.Windows, win)
	}
	return res
}

func TestCapacityLineGolden(t *testing.T) {
	// Ensure the capacity line of a real make capacity run is what the
	// command printed for it, last (scripts/capacity.sh reads it): -q
	// prints it alone.
	res := fixtureUsers(t, filepath.Join("..", "..", "loadtest", "testdata", "results", "users.json"))
	o := &options{label: "loop", stopWhen: stopWhen{{Expr: "page.p99<=50ms"}}}
	o.print.Quiet = true
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, loadtest.Print(res, o.printOptions(res, loadtest.UsersConfig{URL: "http://127.0.0.1:1"}, &stdout, &stderr)), stderr.String())
	got := stdout.String()
	path := filepath.Join("testdata", "capacity.txt")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}
