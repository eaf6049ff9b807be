package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// pastGame makes a game at db whose clock started ago: at the default
// 10-minute tick nothing is due yet, at -tick 1s hundreds of ticks are.
func pastGame(t *testing.T, db string, ago time.Duration) {
	t.Helper()
	start := time.Now().Add(-ago)
	s, err := game.Open(db, game.Options{Now: func() time.Time { return start }})
	require.NoError(t, err)
	_, err = s.Register(context.Background(), "mulder", "trust-no-one", game.FBI)
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// dumpGame returns every row of every table of the game at db, read on a
// read-only connection of its own, so that two dumps differ if anything
// was written in between.
func dumpGame(t *testing.T, db string) string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	defer conn.Close()
	rows, err := conn.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Contains(t, tables, "players")
	var b strings.Builder
	for _, table := range tables {
		fmt.Fprintf(&b, "== %s\n", table)
		rows, err := conn.Query(`SELECT * FROM "` + table + `" ORDER BY 1`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
			fmt.Fprintln(&b, vals...)
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return b.String()
}

// goBuild builds the command pkg (an import path) into dir, as a user
// builds it, and returns the binary's path.
func goBuild(t *testing.T, dir, pkg string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH to build %s", pkg)
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command(goTool, "build", "-o", bin, pkg).CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, out)
	return bin
}

// TestRefusedCommandsChangeNothing: beside a server on its 10-minute tick,
// the README's "a round in a minute" (-tick 1s -round 60, then -round 20),
// -new-player, -seed-players, a second server with workers and the
// players tool's -prepare are each refused, naming the flag and the
// server's pid, and leave the tick, the round and every table as they
// were; -backup, which only reads, works.
// (A refused server used to catch the game up at its own tick first: 25
// ticks and a round's end from two refused runs.)
func TestRefusedCommandsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ss.db")
	pastGame(t, db, 5*time.Minute)
	startProgram(t, "-db", db) // the default 10-minute tick: nothing due for 5 minutes
	before := dumpGame(t, db)
	require.Contains(t, before, "mulder")
	pid := fmt.Sprintf("pid %d", os.Getpid())

	for _, tc := range []struct {
		args []string
		flag string // the refusal names it
	}{
		{[]string{"-tick", "1s", "-round", "60"}, "-db"},
		{[]string{"-tick", "1s", "-round", "20"}, "-db"},
		{[]string{"-tick", "1s", "-round", "20", "-workers", "2"}, "-db"},
		{[]string{"-tick", "1s", "-new-player", "krycek"}, "-new-player"},
		{[]string{"-tick", "1s", "-seed-players", "5"}, "-seed-players"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(context.Background(), append([]string{"-db", db, "-addr", "127.0.0.1:0"}, tc.args...), &stdout, io.Discard)
			require.Error(t, err, "refused beside the running server")
			assert.True(t, strings.HasPrefix(err.Error(), tc.flag), "names the flag %s: %v", tc.flag, err)
			assert.Contains(t, err.Error(), pid, "names the server's pid")
			assert.Empty(t, stdout.String())
			assert.Equal(t, before, dumpGame(t, db), "the game changed")
		})
	}
	t.Run("-backup", func(t *testing.T) {
		dest := filepath.Join(dir, "backup.db")
		require.NoError(t, run(context.Background(), []string{"-db", db, "-tick", "1s", "-backup", dest}, io.Discard, io.Discard))
		assert.Equal(t, before, dumpGame(t, db), "the game changed")
		assert.Contains(t, dumpGame(t, dest), "mulder", "the copy")
	})
	t.Run("players -prepare", func(t *testing.T) {
		players := goBuild(t, t.TempDir(), "github.com/statesecrets/server/cmd/players")
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(players, "-prepare", "5", "-db", db)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.Error(t, cmd.Run(), "refused beside the running server")
		assert.Contains(t, stderr.String(), "-prepare: -db "+db+": another server ("+pid+")", "names the flag and the server's pid")
		assert.Empty(t, stdout.String())
		assert.Equal(t, before, dumpGame(t, db), "the game changed")
	})
}
