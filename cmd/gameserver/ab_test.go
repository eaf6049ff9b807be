package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abReport holds the figures of ab's report that the seed benchmarks quote.
type abReport struct {
	complete, failed, non2xx, docLength int
}

var (
	abComplete  = regexp.MustCompile(`(?m)^Complete requests:\s+(\d+)`)
	abFailed    = regexp.MustCompile(`(?m)^Failed requests:\s+(\d+)`)
	abNon2xx    = regexp.MustCompile(`(?m)^Non-2xx responses:\s+(\d+)`)
	abDocLength = regexp.MustCompile(`(?m)^Document Length:\s+(\d+) bytes`)
)

// runAB runs ApacheBench with args and parses its report.
func runAB(t *testing.T, args ...string) abReport {
	t.Helper()
	path, err := exec.LookPath("ab")
	require.NoError(t, err, "ApacheBench is needed: apt-get install -y apache2-utils (.ci/run does)")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	require.NoError(t, err, "ab %v:\n%s", args, out)
	num := func(re *regexp.Regexp) int {
		m := re.FindSubmatch(out)
		if m == nil {
			return 0 // ab omits Non-2xx responses when there are none
		}
		n, err := strconv.Atoi(string(m[1]))
		require.NoError(t, err)
		return n
	}
	require.Regexp(t, abComplete, string(out))
	return abReport{num(abComplete), num(abFailed), num(abNon2xx), num(abDocLength)}
}

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
			r := runAB(t, "-n", "1000", "-c", "12", p.base+path)
			assert.Equal(t, abReport{complete: 1000, docLength: len(body)}, r)
		})
	}
}
