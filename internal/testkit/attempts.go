package testkit

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// T is what an attempt's assertions report to (assert's and require's
// TestingT): Attempts gives each attempt one of its own.
type T interface {
	Errorf(format string, args ...any)
	FailNow()
}

// attempt records one attempt's failures; FailNow ends the attempt's
// goroutine.
type attempt struct{ errs []string }

func (a *attempt) Errorf(format string, args ...any) {
	a.errs = append(a.errs, fmt.Sprintf(format, args...))
}

func (a *attempt) FailNow() {
	a.errs = append(a.errs, "FailNow")
	runtime.Goexit()
}

// Attempts runs f up to n times, one after another, each on a goroutine of
// its own with a T of its own, and stops at the first whose assertions
// all hold; if none does it fails t with the last one's failures (each
// earlier one is logged). It is for an effect that a busy machine can
// hide for a while, a probe starved as long as the server it measures:
// the effect must show in one of n runs, so a test of one that never
// shows still fails. f must not call t's methods.
func Attempts(t testing.TB, n int, f func(t T)) {
	t.Helper()
	for i := 1; ; i++ {
		a := &attempt{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			f(a)
		}()
		<-done
		switch {
		case len(a.errs) == 0:
			if i > 1 {
				t.Logf("held on attempt %d of %d", i, n)
			}
			return
		case i < n:
			t.Logf("attempt %d of %d failed (a busy machine?):\n%s", i, n, strings.Join(a.errs, "\n"))
		default:
			t.Errorf("all %d attempts failed; the last:\n%s", n, strings.Join(a.errs, "\n"))
			return
		}
	}
}
