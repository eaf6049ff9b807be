package testkit

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RunAB runs ApacheBench (ab) with args, bounded by timeout, and returns
// its report. It fails the test if ab is not installed (apt-get install -y
// apache2-utils; .ci/run does) or exits with an error.
func RunAB(t testing.TB, timeout time.Duration, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("ab")
	require.NoError(t, err, "ab not found: install apache2-utils (.ci/run does)")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	require.NoError(t, err, "ab %v:\n%s", args, out)
	return string(out)
}

// ABField returns the first word after "name:" on a line of ab's report
// (ab's own names: "Complete requests", "Failed requests", ...), or "" if
// the line is missing (ab leaves out "Non-2xx responses" when there are
// none).
func ABField(report, name string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:\s+(\S+)`).FindStringSubmatch(report)
	if m == nil {
		return ""
	}
	return m[1]
}

// ABFigures are the counts of an ab report that tests compare, under
// ab's names; a line ab leaves out (Non-2xx responses when there are
// none) reads 0.
type ABFigures struct {
	Complete, Failed, Non2xx int64 // Complete requests, Failed requests, Non-2xx responses
	DocLength                int64 // Document Length, bytes
	HTML, Total              int64 // HTML transferred, Total transferred, bytes
	RPS                      float64
}

// ParseAB reads the figures of ab's report; it fails the test if the
// report has no "Complete requests" line or a figure is no number.
func ParseAB(t testing.TB, report string) ABFigures {
	t.Helper()
	require.NotEmpty(t, ABField(report, "Complete requests"), "no ab report:\n%s", report)
	i := func(name string) int64 {
		v := ABField(report, name)
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, "ab's %s", name)
		return n
	}
	rps, err := strconv.ParseFloat(ABField(report, "Requests per second"), 64)
	require.NoError(t, err, "ab's Requests per second")
	return ABFigures{Complete: i("Complete requests"), Failed: i("Failed requests"), Non2xx: i("Non-2xx responses"),
		DocLength: i("Document Length"), HTML: i("HTML transferred"), Total: i("Total transferred"), RPS: rps}
}
