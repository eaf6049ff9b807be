package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/make-loadtest")

// makeLoadtestDir holds the JSON of a real make loadtest run (bin/loadtest-report/json,
// its per-second timelines and distributions left out: explain reads neither)
// and the text its explain steps printed.
var makeLoadtestDir = filepath.Join("testdata", "make-loadtest")

// repeats is scripts/loadtest.sh's files(): a run's three repeats, comma-separated.
func repeats(server, run string) string {
	var f []string
	for _, r := range []string{"1", "2", "3"} {
		f = append(f, filepath.Join(makeLoadtestDir, "json", server, run+"-"+r+".json"))
	}
	return strings.Join(f, ",")
}

func TestMakeLoadtestGolden(t *testing.T) {
	// Ensure each explain step of scripts/loadtest.sh prints, for a real
	// make loadtest run's JSON, what make loadtest printed for it.
	dir := func(s string) string { return filepath.Join(makeLoadtestDir, "json", s) }
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"gap.txt", []string{"gap", "a new connection each=" + repeats("loop", "gap-new-connection"), "keep-alive=" + repeats("loop", "gap-keep-alive")}},
		{"hol.txt", []string{"hol", "no read cache=" + repeats("loop-nocache", "hol"), "read cache=" + repeats("loop", "hol")}},
		{"storm.txt", []string{"storm", "hash on the loop=" + repeats("loop-hash", "storm"), "hash on the pool=" + repeats("loop", "storm")}},
		{"sweep.txt", []string{"sweep", filepath.Join(dir("loop"), "sweep.json")}},
		{"engines.txt", []string{"engines", "epoll loop=" + dir("loop"), "net/http=" + dir("nethttp")}},
		{"hol-nethttp.txt", []string{"hol", "no read cache=" + repeats("nethttp-nocache", "hol"), "read cache=" + repeats("nethttp", "hol")}},
		{"storm-nethttp.txt", []string{"storm", "hash under the lock=" + repeats("nethttp-hash", "storm"), "hash off it=" + repeats("nethttp", "storm")}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			code, stdout, stderr := runCLI(append([]string{"explain"}, tc.args...)...)
			require.Equal(t, 0, code, stderr)
			path := filepath.Join(makeLoadtestDir, tc.golden)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(stdout), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(want), stdout)
		})
	}
}
