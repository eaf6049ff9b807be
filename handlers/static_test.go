package handlers_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/assets"
	"github.com/statesecrets/server/game"
)

// serve sends one request to a fresh Server and returns the response and its body.
func serve(tb testing.TB, h http.Handler, method, target string, header map[string]string) (*http.Response, []byte) {
	tb.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, err := io.ReadAll(rec.Result().Body)
	require.NoError(tb, err)
	return rec.Result(), body
}

func staticFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := fs.ReadFile(assets.Static, name)
	require.NoError(tb, err)
	return b
}

func TestStatic(t *testing.T) {
	e := newEnv(t)
	css := staticFile(t, "style.css")

	t.Run("FrontPage", func(t *testing.T) {
		// Ensure / is the embedded index.html, the same for everyone, with its
		// references to the stylesheet, icons and logo by their hashed names.
		resp, body := serve(t, e.srv, "GET", "/", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		want := strings.NewReplacer(`="/static/style.css"`, `="`+assets.Path("style.css")+`"`,
			`="/static/favicon.svg"`, `="`+assets.Path("favicon.svg")+`"`,
			`="/favicon.ico"`, `="`+assets.Path("favicon.ico")+`"`,
			`="/static/logo.svg"`, `="`+assets.Path("logo.svg")+`"`).Replace(string(staticFile(t, "index.html")))
		assert.Equal(t, want, string(body))
		assert.NotContains(t, string(body), `="/static/style.css"`)
		assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		assert.NotEmpty(t, resp.Header.Get("ETag"))
		assert.Contains(t, string(body), `href="/login"`)
		assert.Contains(t, string(body), `href="/register"`)
	})

	t.Run("OK", func(t *testing.T) {
		// Ensure a static file comes with its type, a strong ETag, a cache lifetime and a length.
		for name, ctype := range map[string]string{
			"style.css": "text/css; charset=utf-8", "countdown.js": "text/javascript; charset=utf-8",
			"logo.svg": "image/svg+xml", "favicon.svg": "image/svg+xml", "favicon.ico": "image/x-icon",
		} {
			resp, body := serve(t, e.srv, "GET", "/static/"+name, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, name)
			assert.Equal(t, staticFile(t, name), body, name)
			assert.Equal(t, ctype, resp.Header.Get("Content-Type"), name)
			assert.Regexp(t, `^"[0-9a-f]{16}"$`, resp.Header.Get("ETag"), name)
			assert.Equal(t, "max-age=300", resp.Header.Get("Cache-Control"), name, "the old name, kept minutes")
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), name)
		}
		resp, body := serve(t, e.srv, "GET", "/favicon.ico", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, staticFile(t, "favicon.ico"), body)
	})

	t.Run("Hashed", func(t *testing.T) {
		// Ensure every sub-resource a page names (a game page's head and
		// masthead, the front page) is a content-hashed URL served as the
		// file itself, kept a year without revalidation and not marked
		// public, with the same ETag as the plain name.
		_, tid := e.player("scully", game.FBI)
		_, hq := e.client().get("/game?function=hq&tid=" + tid)
		_, front := serve(t, e.srv, "GET", "/", nil)
		refs := assetRef.FindAllStringSubmatch(hq+string(front), -1)
		seen := map[string]bool{}
		for _, m := range refs {
			seen[m[1]] = true
		}
		for _, name := range []string{"style.css", "favicon.svg", "favicon.ico", "countdown.js", "live.js", "logo.svg"} {
			urlPath := assets.Path(name)
			assert.Regexp(t, `^/static/[a-z]+\.[0-9a-f]{16}\.[a-z]+$`, urlPath)
			assert.True(t, seen[urlPath], "%s is named by its hashed URL", name)
		}
		for urlPath := range seen {
			resp, body := serve(t, e.srv, "GET", urlPath, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, urlPath)
			name, ok := assets.Unhash(strings.TrimPrefix(urlPath, "/static/"))
			require.True(t, ok, urlPath)
			assert.Equal(t, staticFile(t, name), body, urlPath)
			assert.Equal(t, "max-age=31536000, immutable", resp.Header.Get("Cache-Control"), urlPath)
			plain, _ := serve(t, e.srv, "GET", "/static/"+name, nil)
			assert.Equal(t, plain.Header.Get("ETag"), resp.Header.Get("ETag"), urlPath)
			assert.Equal(t, plain.Header.Get("Content-Type"), resp.Header.Get("Content-Type"), urlPath)
		}
		assert.NotContains(t, hq, `"/static/style.css"`, "no page names a plain asset")
	})

	t.Run("StaleHash", func(t *testing.T) {
		// Ensure a hashed name with another release's hash gets today's file,
		// revalidated on every use (never kept a year under the wrong name),
		// and a hashed name of no file is 404.
		resp, body := serve(t, e.srv, "GET", "/static/style.0123456789abcdef.css", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, css, body)
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		resp, _ = serve(t, e.srv, "GET", "/static/nope.0123456789abcdef.css", nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		resp, _ = serve(t, e.srv, "GET", "/static/index.0123456789abcdef.html", nil)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "pages have no hashed name")
	})

	t.Run("NotModified", func(t *testing.T) {
		// Ensure If-None-Match with the current ETag gets 304 and no body; a stale one gets the file.
		resp, _ := serve(t, e.srv, "GET", "/static/style.css", nil)
		etag := resp.Header.Get("ETag")
		resp, body := serve(t, e.srv, "GET", "/static/style.css", map[string]string{"If-None-Match": etag})
		assert.Equal(t, http.StatusNotModified, resp.StatusCode)
		assert.Empty(t, body)
		resp, body = serve(t, e.srv, "GET", "/static/style.css", map[string]string{"If-None-Match": `"0000000000000000"`})
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, css, body)
	})

	t.Run("Range", func(t *testing.T) {
		// Ensure a byte range gets 206 with exactly those bytes and a Content-Range.
		resp, body := serve(t, e.srv, "GET", "/static/style.css", map[string]string{"Range": "bytes=10-29"})
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		assert.Equal(t, css[10:30], body)
		assert.Equal(t, "bytes 10-29/"+itoa(len(css)), resp.Header.Get("Content-Range"))
		resp, _ = serve(t, e.srv, "GET", "/static/style.css", map[string]string{"Range": "bytes=999999-"})
		assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
	})

	t.Run("Head", func(t *testing.T) {
		// Ensure HEAD gets the GET's headers and no body.
		resp, body := serve(t, e.srv, "HEAD", "/static/style.css", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, body)
		assert.Equal(t, itoa(len(css)), resp.Header.Get("Content-Length"))
		assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))
	})

	t.Run("Gzip", func(t *testing.T) {
		// Ensure a client accepting gzip gets the compressed variant, with its own ETag, which
		// decompresses to the original; and If-None-Match works on that ETag.
		plain, _ := serve(t, e.srv, "GET", "/static/style.css", nil)
		resp, body := serve(t, e.srv, "GET", "/static/style.css", map[string]string{"Accept-Encoding": "br;q=1.0, gzip;q=0.8"})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
		assert.Equal(t, "Accept-Encoding", plain.Header.Get("Vary"))
		assert.NotEqual(t, plain.Header.Get("ETag"), resp.Header.Get("ETag"))
		assert.Less(t, len(body), len(css))
		assert.Equal(t, itoa(len(body)), resp.Header.Get("Content-Length"))
		zr, err := gzip.NewReader(bytes.NewReader(body))
		require.NoError(t, err)
		got, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, css, got)

		resp, _ = serve(t, e.srv, "GET", "/static/style.css", map[string]string{
			"Accept-Encoding": "gzip", "If-None-Match": resp.Header.Get("ETag")})
		assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	})

	t.Run("AcceptEncoding", func(t *testing.T) {
		// Ensure Accept-Encoding is parsed, q=0 included.
		for header, want := range map[string]bool{
			"":                     false,
			"gzip":                 true,
			"GZIP":                 true,
			"x-gzip":               true,
			"deflate, gzip":        true,
			"gzip;q=0":             false,
			"gzip; q=0.000":        false,
			"gzip;q=0.001":         true,
			"*":                    true,
			"*;q=0":                false,
			"*, gzip;q=0":          false,
			"gzip;q=0, *":          false,
			"br":                   false,
			"identity":             false,
			"gzip;q=2":             false,
			"gzip;q=abc":           false,
			"gzip;level=9":         true,
			"br;q=1, gzip ; q=0.5": true,
		} {
			resp, _ := serve(t, e.srv, "GET", "/static/style.css", map[string]string{"Accept-Encoding": header})
			assert.Equal(t, want, resp.Header.Get("Content-Encoding") == "gzip", "Accept-Encoding: %q", header)
		}
	})

	t.Run("NoGzipWhenLarger", func(t *testing.T) {
		// Ensure a file gzip cannot shrink (the PNG inside favicon.ico) is always sent as it is.
		resp, body := serve(t, e.srv, "GET", "/favicon.ico", map[string]string{"Accept-Encoding": "gzip"})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Content-Encoding"))
		assert.Equal(t, staticFile(t, "favicon.ico"), body)
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		// Ensure an unknown asset or path is the rendered 404 page.
		for _, path := range []string{"/static/nope.css", "/static/", "/nope"} {
			resp, body := serve(t, e.srv, "GET", path, nil)
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
			assert.Contains(t, string(body), "There is no such page.", path)
		}
	})

	t.Run("ErrMethod", func(t *testing.T) {
		// Ensure a method the route does not allow is 405 with an Allow header.
		resp, _ := serve(t, e.srv, "DELETE", "/static/style.css", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
		assert.True(t, strings.Contains(resp.Header.Get("Allow"), "GET"))
	})
}

var itoa = strconv.Itoa

// assetRef matches a page's href or src naming a static file.
var assetRef = regexp.MustCompile(`(?:href|src)="(/static/[^"?]+)"`)
