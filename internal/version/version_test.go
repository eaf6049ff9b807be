package version_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/statesecrets/server/internal/version"
)

func TestGet(t *testing.T) {
	// Ensure every field is filled (a test binary records no VCS revision:
	// "unknown") and the Go version is the running one's.
	v := version.Get()
	assert.NotEmpty(t, v.Version)
	assert.NotEmpty(t, v.Revision)
	assert.Equal(t, runtime.Version(), v.GoVersion)
	assert.True(t, strings.HasPrefix(v.String(), v.Version+" (revision "+v.Revision), v.String())
}
