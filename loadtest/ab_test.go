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

func TestSameAsAB(t *testing.T) {
	url := MustServePageProcess(t)
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "NewConnections", true: "KeepAlive"}[keepAlive], func(t *testing.T) {
			// Ensure ab and we, run alike against the same server, count
			// the same requests, failures, lengths and bytes, and measure
			// rates within a factor of two of each other.
			args := []string{"-q", "-n", "2000", "-c", "12"}
			if keepAlive {
				args = append(args, "-k")
			}
			ab := runAB(t, append(args, url)...)
			res, err := loadtest.Run(context.Background(), loadtest.Config{URL: url, Requests: 2000, Concurrency: 12, KeepAlive: keepAlive})
			require.NoError(t, err)
			ours := abFigures{res.CompleteRequests, res.FailedRequests, res.DocumentLength, res.HTMLTransferred,
				res.TotalTransferred, res.Non2xx, res.RequestsPerSecond()}
			t.Logf("ab:   %+v\nours: %+v", ab, ours)
			assert.EqualValues(t, 2000, ours.complete)
			assert.Equal(t, ab.complete, ours.complete, "Complete requests")
			assert.Equal(t, ab.failed, ours.failed, "Failed requests")
			assert.Equal(t, ab.docLength, ours.docLength, "Document Length")
			assert.Equal(t, ab.html, ours.html, "HTML transferred")
			assert.Equal(t, ab.total, ours.total, "Total transferred")
			assert.Equal(t, ab.non2xx, ours.non2xx, "Non-2xx responses")
			assert.Greater(t, ours.rps, ab.rps/2, "Requests per second within a factor of two")
			assert.Less(t, ours.rps, 2*ab.rps, "Requests per second within a factor of two")
		})
	}
}
