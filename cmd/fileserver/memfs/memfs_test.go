package memfs_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/statesecrets/server/cmd/fileserver/memfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustLoad snapshots a directory holding index.html and sub/a.css.
func mustLoad(t *testing.T) *memfs.Handler {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!DOCTYPE html><p>home</p>"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "a.css"), []byte("p{color:red}"), 0o644))
	h, err := memfs.Load(dir)
	require.NoError(t, err)
	return h
}

func serve(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestHandler(t *testing.T) {
	h := mustLoad(t)

	// Ensure a plain GET gets the file with the headers ServeContent sends.
	t.Run("OK", func(t *testing.T) {
		w := serve(h, "GET", "/sub/a.css", nil)
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "p{color:red}", w.Body.String())
		assert.Equal(t, "text/css; charset=utf-8", w.Header().Get("Content-Type"))
		assert.Equal(t, "12", w.Header().Get("Content-Length"))
		assert.Equal(t, "bytes", w.Header().Get("Accept-Ranges"))
		assert.NotEmpty(t, w.Header().Get("Last-Modified"))
		assert.NotEmpty(t, w.Header().Get("Etag"))
	})

	// Ensure "/" means index.html, and HEAD has the length but no body.
	t.Run("IndexAndHead", func(t *testing.T) {
		w := serve(h, "HEAD", "/", nil)
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Empty(t, w.Body.String())
		assert.Equal(t, "26", w.Header().Get("Content-Length"))
	})

	// Ensure conditional and range requests are answered (by ServeContent).
	t.Run("Conditional", func(t *testing.T) {
		etag := serve(h, "GET", "/index.html", nil).Header().Get("Etag")
		assert.Equal(t, http.StatusNotModified, serve(h, "GET", "/index.html", map[string]string{"If-None-Match": etag}).Code)
		w := serve(h, "GET", "/index.html", map[string]string{"Range": "bytes=0-8"})
		assert.Equal(t, http.StatusPartialContent, w.Code)
		assert.Equal(t, "<!DOCTYPE", w.Body.String())
	})

	// Ensure unknown paths get 404 and other methods 405 naming the allowed ones.
	t.Run("Errors", func(t *testing.T) {
		assert.Equal(t, http.StatusNotFound, serve(h, "GET", "/nope.html", nil).Code)
		w := serve(h, "POST", "/index.html", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
		assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))
	})
}

func TestPrepared(t *testing.T) {
	h := mustLoad(t)
	// Ensure every file, and a directory for its index.html, has its plain
	// answer prepared, and other paths none.
	assert.NotNil(t, h.Prepared([]byte("/sub/a.css")))
	assert.Same(t, h.Prepared([]byte("/index.html")), h.Prepared([]byte("/")))
	assert.Nil(t, h.Prepared([]byte("/sub/")))
	assert.Nil(t, h.Prepared([]byte("/nope.html")))
}

func TestLoad(t *testing.T) {
	// Ensure a missing root is an error naming it.
	_, err := memfs.Load(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "missing")
}
