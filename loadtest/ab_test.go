package loadtest_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/statesecrets/server/loadtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// abFigures are the report lines both tools must agree on.
type abFigures struct {
	complete, failed, docLength, html, total, non2xx int64
	rps                                              float64
}

// runAB runs the real ab and reads its report.
func runAB(t *testing.T, args ...string) abFigures {
	t.Helper()
	path, err := exec.LookPath("ab")
	require.NoError(t, err, "ab not found: install apache2-utils")
	out, err := exec.Command(path, args...).CombinedOutput()
	require.NoError(t, err, "ab %v: %s", args, out)
	num := func(label string) string {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `:\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			return "0"
		}
		return string(m[1])
	}
	i := func(label string) int64 {
		n, err := strconv.ParseInt(num(label), 10, 64)
		require.NoError(t, err, label)
		return n
	}
	rps, err := strconv.ParseFloat(num("Requests per second"), 64)
	require.NoError(t, err)
	return abFigures{i("Complete requests"), i("Failed requests"), i("Document Length"), i("HTML transferred"),
		i("Total transferred"), i("Non-2xx responses"), rps}
}

// runOurs runs our harness as runAB runs ab.
func runOurs(t *testing.T, url string, keepAlive bool) abFigures {
	t.Helper()
	res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 2000, Concurrency: 12, KeepAlive: keepAlive})
	require.NoError(t, err)
	return abFigures{res.CompleteRequests, res.FailedRequests, res.DocumentLength, res.HTMLTransferred,
		res.TotalTransferred, res.Non2xx, res.RequestsPerSecond()}
}

// checkFigures asserts one run's counts, ab's or ours.
func checkFigures(t *testing.T, got abFigures, keepAlive bool) {
	t.Helper()
	assert.EqualValues(t, 2000, got.complete, "Complete requests")
	assert.Zero(t, got.failed, "Failed requests")
	assert.EqualValues(t, 2159, got.docLength, "Document Length")
	assert.EqualValues(t, 2000*2159, got.html, "HTML transferred")
	assert.Zero(t, got.non2xx, "Non-2xx responses")
	if keepAlive { // every response's header section is the same length
		assert.EqualValues(t, 4604000, got.total, "Total transferred")
	} else {
		assert.EqualValues(t, 4556000, got.total, "Total transferred")
	}
}

// maxRounds bounds the alternating ab/ours rounds of TestSameAsAB.
const maxRounds = 5

func TestSameAsAB(t *testing.T) {
	url := MustServePageProcess(t)
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "NewConnections", true: "KeepAlive"}[keepAlive], func(t *testing.T) {
			// Ensure ab and we, run alike against the same server (another
			// process), count the same requests, failures, lengths and
			// bytes, and measure rates within a factor of two of each other.
			// 2000 requests take a fraction of a second, so a noisy
			// neighbour on the shared 2-core machine can halve any one run:
			// rounds alternate ab and ours, at least two each, the best
			// rate of each counts, and more rounds (up to maxRounds) run
			// only while the best rates are more than two times apart.
			args := []string{"-q", "-n", "2000", "-c", "12"}
			if keepAlive {
				args = append(args, "-k")
			}
			args = append(args, url)
			var abBest, oursBest float64
			within := func() bool { return oursBest > abBest/2 && oursBest < 2*abBest }
			for round := 1; round <= maxRounds && (round <= 2 || !within()); round++ {
				ab, ours := runAB(t, args...), runOurs(t, url, keepAlive)
				t.Logf("round %d: ab %+v\n         ours %+v", round, ab, ours)
				checkFigures(t, ab, keepAlive)
				checkFigures(t, ours, keepAlive)
				abBest, oursBest = max(abBest, ab.rps), max(oursBest, ours.rps)
			}
			assert.True(t, within(), "Requests per second within a factor of two: ab %.0f, ours %.0f", abBest, oursBest)
		})
	}
}
