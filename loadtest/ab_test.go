package loadtest_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/statesecrets/server/loadtest"
)

// abFigures are the report lines both tools must agree on.
type abFigures struct {
	complete, failed, docLength, html, total, non2xx int64
	rps                                              float64
}

// runAB runs the real ab and reads its report.
func runAB(t *testing.T, args ...string) abFigures {
	t.Helper()
	r := testkit.ParseAB(t, testkit.RunAB(t, 2*time.Minute, args...))
	return abFigures{r.Complete, r.Failed, r.DocLength, r.HTML, r.Total, r.Non2xx, r.RPS}
}

// ourBinary builds cmd/loadtest as a user would (without the race detector
// this test may run under, which slows a client several times over, while ab
// is a native program) and returns its path.
func ourBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command must be on PATH to build cmd/loadtest")
	bin := filepath.Join(t.TempDir(), "loadtest")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/statesecrets/server/cmd/loadtest").CombinedOutput()
	require.NoError(t, err, "go build cmd/loadtest: %s", out)
	return bin
}

// runOurs runs our harness's command with ab's arguments and reads its
// JSON result.
func runOurs(t *testing.T, bin string, args ...string) abFigures {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"-json"}, args...)...).Output()
	require.NoError(t, err, "loadtest %v", args)
	var res struct {
		Complete  int64   `json:"complete_requests"`
		Failed    int64   `json:"failed_requests"`
		DocLength int64   `json:"document_length"`
		HTML      int64   `json:"html_transferred_bytes"`
		Total     int64   `json:"total_transferred_bytes"`
		Non2xx    int64   `json:"non_2xx_responses"`
		RPS       float64 `json:"requests_per_second"`
	}
	env, err := loadtest.ReadEnvelope(out)
	require.NoError(t, err, "loadtest -json output: %s", out)
	require.NoError(t, json.Unmarshal(env.Results, &res), "loadtest -json output: %s", out)
	return abFigures{res.Complete, res.Failed, res.DocLength, res.HTML, res.Total, res.Non2xx, res.RPS}
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
	bin := ourBinary(t)
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "NewConnections", true: "KeepAlive"}[keepAlive], func(t *testing.T) {
			// Ensure ab and our command, built as a user builds it, run alike
			// against the same server (another process), count the same
			// requests, failures, lengths and bytes, and measure rates
			// within a factor of two of each other.
			// 2000 requests take a fraction of a second, so a noisy
			// neighbour on the shared 2-core machine can halve any one run:
			// rounds alternate ab and ours, at least two each, the best
			// rate of each counts, and more rounds (up to maxRounds) run
			// only while the best rates are more than two times apart.
			args := []string{"-n", "2000", "-c", "12"}
			if keepAlive {
				args = append(args, "-k")
			}
			args = append(args, url)
			var abBest, oursBest float64
			within := func() bool { return oursBest > abBest/2 && oursBest < 2*abBest }
			for round := 1; round <= maxRounds && (round <= 2 || !within()); round++ {
				ab, ours := runAB(t, append([]string{"-q"}, args...)...), runOurs(t, bin, args...)
				t.Logf("round %d: ab %+v\n         ours %+v", round, ab, ours)
				checkFigures(t, ab, keepAlive)
				checkFigures(t, ours, keepAlive)
				abBest, oursBest = max(abBest, ab.rps), max(oursBest, ours.rps)
			}
			assert.True(t, within(), "Requests per second within a factor of two: ab %.0f, ours %.0f", abBest, oursBest)
		})
	}
}
