//go:build unix

package testkit_test

import (
	"testing"
	"time"

	"github.com/statesecrets/server/internal/testkit"
	"github.com/stretchr/testify/assert"
)

func TestCPUTimeGrows(t *testing.T) {
	before := testkit.CPUTime()
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	assert.Positive(t, x)
	assert.Greater(t, testkit.CPUTime(), before, "50 ms of busy work used no CPU")
}
