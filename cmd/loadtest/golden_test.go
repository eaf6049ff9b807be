package main

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

func TestMakeLoadtestGolden(t *testing.T) {
	// Ensure each explain step of scripts/loadtest.sh prints, for a real
	// make loadtest run's JSON, what make loadtest printed for it: as the
	// run wrote it (schema version 2), and in today's form (version 3:
	// percentiles keyed, every status counted).
	t.Run("v2", func(t *testing.T) { testMakeLoadtestGolden(t, filepath.Join(makeLoadtestDir, "json")) })
	t.Run("v3", func(t *testing.T) { testMakeLoadtestGolden(t, toVersion3(t, filepath.Join(makeLoadtestDir, "json"))) })
}

// toVersion3 copies the JSON files under dir into a temporary folder in
// schema version 3's form, and returns it.
func toVersion3(t *testing.T, dir string) string {
	out := t.TempDir()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
		doc["schema_version"] = 3
		upgrade(doc)
		b, err = json.Marshal(doc)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), b, 0o644)
	})
	require.NoError(t, err)
	return out
}

// upgrade rewrites version 2's result objects under v as version 3's:
// percentage tables keyed by row, non_2xx_by_status as status_codes with
// the 200s.
func upgrade(v any) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			upgrade(x)
		}
	case map[string]any:
		for k, x := range v {
			if list, ok := x.([]any); ok && strings.HasSuffix(k, "percentiles_ms") {
				keyed := map[string]any{}
				for _, p := range list {
					p := p.(map[string]any)
					keyed["p"+strconv.FormatFloat(p["percent"].(float64), 'f', -1, 64)] = p["ms"]
				}
				v[k] = keyed
				continue
			}
			upgrade(x)
		}
		if _, ok := v["complete_requests"]; ok {
			codes := map[string]any{}
			ok := v["complete_requests"].(float64) - v["failed_requests"].(float64)
			if by, has := v["non_2xx_by_status"].(map[string]any); has {
				for code, n := range by {
					codes[code], ok = n, ok-n.(float64)
				}
			}
			codes["200"] = ok
			delete(v, "non_2xx_by_status")
			v["status_codes"] = codes
		}
	}
}

func testMakeLoadtestGolden(t *testing.T, jsonDir string) {
	dir := func(s string) string { return filepath.Join(jsonDir, s) }
	repeats := func(server, run string) string {
		var f []string
		for _, r := range []string{"1", "2", "3"} {
			f = append(f, filepath.Join(jsonDir, server, run+"-"+r+".json"))
		}
		return strings.Join(f, ",")
	}
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
