package assets_test

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/assets"
)

func TestHashedNames(t *testing.T) {
	// Ensure a file's hashed name carries the start of its SHA-256 before
	// the extension, changes with the content, and Unhash inverts it.
	assert.Equal(t, "style.e3b0c44298fc1c14.css", assets.HashedName("style.css", nil), "SHA-256 of nothing")
	assert.NotEqual(t, assets.HashedName("style.css", []byte("a")), assets.HashedName("style.css", []byte("b")))
	for _, tc := range []struct {
		hashed, name string
		ok           bool
	}{
		{"style.e3b0c44298fc1c14.css", "style.css", true},
		{"dir/live.0123456789abcdef.js", "dir/live.js", true},
		{"style.css", "", false},
		{"style.E3B0C44298FC1C14.css", "", false},
		{"style.e3b0c44298fc1c1.css", "", false},
		{".e3b0c44298fc1c14.css", "", false},
		{"stylee3b0c44298fc1c14.css", "", false},
	} {
		name, ok := assets.Unhash(tc.hashed)
		assert.Equal(t, tc.ok, ok, tc.hashed)
		assert.Equal(t, tc.name, name, tc.hashed)
	}
}

func TestPath(t *testing.T) {
	// Ensure every static file but the HTML pages has a hashed URL made
	// from its embedded content, and other names keep their plain one.
	body, err := fs.ReadFile(assets.Static, "style.css")
	require.NoError(t, err)
	assert.Equal(t, "/static/"+assets.HashedName("style.css", body), assets.Path("style.css"))
	assert.Equal(t, "/static/index.html", assets.Path("index.html"))
	assert.Equal(t, "/static/nope.css", assets.Path("nope.css"))
}
