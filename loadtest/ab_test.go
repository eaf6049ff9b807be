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

func TestSameAsAB(t *testing.T) {
	url := MustServePageProcess(t)
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "NewConnections", true: "KeepAlive"}[keepAlive], func(t *testing.T) {
			// Ensure ab and we, run alike against the same server (another
			// process), count the same requests, failures, lengths and
			// bytes, and measure rates within a factor of two of each other.
			// Runs alternate, three each, and the best rate of each counts:
			// 2000 requests take a fraction of a second, so a noisy
			// neighbour on the shared machine can halve any single run.
			args := []string{"-q", "-n", "2000", "-c", "12"}
			if keepAlive {
				args = append(args, "-k")
			}
			args = append(args, url)
			var abBest, oursBest float64
			for _, abTurn := range []bool{true, false, false, true, true, false} {
				var got abFigures
				if abTurn {
					got = runAB(t, args...)
					abBest = max(abBest, got.rps)
				} else {
					got = runOurs(t, url, keepAlive)
					oursBest = max(oursBest, got.rps)
				}
				t.Logf("ab=%v %+v", abTurn, got)
				assert.EqualValues(t, 2000, got.complete, "Complete requests")
				assert.Zero(t, got.failed, "Failed requests")
				assert.EqualValues(t, 2159, got.docLength, "Document Length")
				assert.EqualValues(t, 2000*2159, got.html, "HTML transferred")
				assert.Zero(t, got.non2xx, "Non-2xx responses")
				if keepAlive {
					assert.EqualValues(t, 4604000, got.total, "Total transferred")
				} else {
					assert.EqualValues(t, 4556000, got.total, "Total transferred")
				}
			}
			assert.Greater(t, oursBest, abBest/2, "Requests per second within a factor of two")
			assert.Less(t, oursBest, 2*abBest, "Requests per second within a factor of two")
		})
	}
}
