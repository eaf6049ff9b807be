// Package testkit holds the helpers several packages' tests share: the
// process's and a thread's CPU time, latency quantiles, ApacheBench runs
// and their reports (ab.go), a log buffer the code under test and the
// test share (LogBuffer), Prometheus scrapes (ParseMetrics), event
// streams (OpenEvents, ParseEvents), a clock moved by hand (Clock), a
// loopback server (MustServe) and attempts at an effect a busy machine
// may hide (Attempts). It is for tests only
// (internal/browsertest starts Chromium for the browser tests), and
// imports none of the module's packages, so that any package's tests,
// the engine's included, may import it.
package testkit

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// Quantile returns the q-quantile (0 to 1) of ds, which it sorts in place:
// the value at index q*len(ds), the last one for q = 1. ds must not be
// empty.
func Quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	return ds[min(int(q*float64(len(ds))), len(ds)-1)]
}

// ReportCPU starts measuring the process's CPU time (CPUTime); the
// returned func reports it per op as "cpu-ns/op". On a shared, loaded
// machine wall time per op swings with other processes, CPU time far
// less.
func ReportCPU(b *testing.B) func() {
	start := CPUTime()
	return func() {
		b.ReportMetric(float64((CPUTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// MustServe starts an httptest server (net/http, on 127.0.0.1:0) running
// h, closed when the test ends, and returns its URL.
func MustServe(tb testing.TB, h http.Handler) string {
	tb.Helper()
	s := httptest.NewServer(h)
	tb.Cleanup(s.Close)
	return s.URL
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
