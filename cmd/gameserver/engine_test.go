package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEnsureLoopProcs(t *testing.T) {
	// Ensure the loop engine serves with a P for the loop besides one for
	// the hashes, on one CPU too, unless the environment sets GOMAXPROCS;
	// net/http's engine keeps what it has.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	t.Setenv("GOMAXPROCS", "") // as unset

	runtime.GOMAXPROCS(1)
	ensureLoopProcs(engineNetHTTP)
	assert.Equal(t, 1, runtime.GOMAXPROCS(0), "nethttp")
	ensureLoopProcs(engineLoop)
	assert.Equal(t, minLoopProcs, runtime.GOMAXPROCS(0), "the loop on one CPU")

	runtime.GOMAXPROCS(3)
	ensureLoopProcs(engineLoop)
	assert.Equal(t, 3, runtime.GOMAXPROCS(0), "more CPUs: as they are")

	runtime.GOMAXPROCS(1)
	t.Setenv("GOMAXPROCS", "1")
	ensureLoopProcs(engineLoop)
	assert.Equal(t, 1, runtime.GOMAXPROCS(0), "the environment's choice")
}
