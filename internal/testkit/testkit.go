// Package testkit holds the helpers several packages' tests share: the
// process's CPU time, latency quantiles, and ApacheBench runs. It is for
// tests only (internal/browsertest starts Chromium for the browser tests).
package testkit

import (
	"context"
	"os/exec"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Quantile returns the q-quantile (0 to 1) of ds, which it sorts in place:
// the value at index q*len(ds), the last one for q = 1. ds must not be
// empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	return ds[min(int(q*float64(len(ds))), len(ds)-1)]
}

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

// WatchStalls starts a goroutine that sleeps 1 ms at a time and times how
// late it wakes; the returned func stops it and returns the latest wake-up
// seen, less the millisecond. That is how long the machine (other
// processes on its cores) or the Go runtime held a goroutine of this
// process back, whatever the code under test did on its other threads:
// what a wall-clock bound in a test must allow for on a busy machine.
func WatchStalls() (stop func() time.Duration) {
	done := make(chan time.Duration)
	quit := make(chan struct{})
	go func() {
		var worst time.Duration
		for {
			select {
			case <-quit:
				done <- worst
				return
			default:
			}
			start := time.Now()
			time.Sleep(time.Millisecond)
			worst = max(worst, time.Since(start)-time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(quit)
		return <-done
	}
}
