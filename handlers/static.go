package handlers

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/statesecrets/server/assets"
)

// asset is one static file, read, hashed and compressed once at start-up.
type asset struct {
	body         []byte
	gzipped      []byte // nil when gzip would not make it smaller
	etag         string // strong, from the content hash: "1f2e...", quotes included
	gzipETag     string // the gzip variant's: "1f2e...-gzip"
	contentType  string
	cacheControl string
}

// Cache lifetimes (RFC 9111 section 5.2.2; RFC 8246 for immutable). The
// pages name every sub-resource by its content-hashed URL
// (assets.Path), which changes with the content: a browser may keep it
// for a year and not even revalidate it on reload. The plain names
// (/static/style.css, /favicon.ico) are still served, for what names them
// from outside and for pages cached before a release, but kept only
// minutes. The front page is revalidated on every use (a cheap 304 by
// ETag) so a new release shows at once. A hashed name whose hash is not
// the content's (a page of another release: a worker not yet restarted,
// an old cache) gets the current content, revalidated on every use, so
// nothing is kept a year under a name that does not match it. No value
// says public: nothing here is behind authentication, so shared caches
// may store it anyway (REDbot).
const (
	frontCacheControl     = "no-cache"
	staticCacheControl    = "max-age=300"
	hashedCacheControl    = "max-age=31536000, immutable"
	staleHashCacheControl = "no-cache"
)

// contentTypes are fixed here rather than taken from the system's MIME
// tables, which differ between machines.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".ico":  "image/x-icon",
	".png":  "image/png",
	".txt":  "text/plain; charset=utf-8",
}

// loadStatic reads every file of assets.Static and keys it by the URL
// paths it is served at: /static/NAME and, but for HTML files, its hashed
// name (assets.Path), plus / for index.html and /favicon.ico. HTML files
// refer to the others by their hashed names: each ="/static/NAME" and
// ="/favicon.ico" in them is rewritten so at start-up.
func loadStatic() (map[string]*asset, error) {
	out := make(map[string]*asset)
	var pages []string
	err := fs.WalkDir(assets.Static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if path.Ext(name) == ".html" {
			pages = append(pages, name) // once every hashed name is known
			return nil
		}
		return addStatic(out, name, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("handlers: static assets: %w", err)
	}
	hashed := hashedRefs(out)
	for _, name := range pages {
		if err := addStatic(out, name, hashed); err != nil {
			return nil, fmt.Errorf("handlers: static assets: %w", err)
		}
	}
	for urlPath, name := range map[string]string{"/": "index.html", "/favicon.ico": "favicon.ico"} {
		a, ok := out["/static/"+name]
		if !ok {
			return nil, fmt.Errorf("handlers: static assets: %s is missing", name)
		}
		front := *a
		if urlPath == "/" {
			front.cacheControl = frontCacheControl
		}
		out[urlPath] = &front
	}
	return out, nil
}

// addStatic reads the file name of assets.Static, rewritten by refs if
// not nil, and adds it to out at /static/NAME, and at its hashed name
// unless it is an HTML file.
func addStatic(out map[string]*asset, name string, refs *strings.Replacer) error {
	body, err := fs.ReadFile(assets.Static, name)
	if err != nil {
		return err
	}
	if refs != nil {
		body = []byte(refs.Replace(string(body)))
	}
	a, err := newAsset(name, body)
	if err != nil {
		return err
	}
	out["/static/"+name] = a
	if path.Ext(name) != ".html" {
		immutable := *a
		immutable.cacheControl = hashedCacheControl
		out[assets.Path(name)] = &immutable
	}
	return nil
}

// hashedRefs rewrites an HTML file's references to the plain names of
// the files in static (by URL path) to their hashed names.
func hashedRefs(static map[string]*asset) *strings.Replacer {
	var pairs []string
	for urlPath := range static {
		if name, ok := strings.CutPrefix(urlPath, "/static/"); ok && assets.Path(name) != urlPath {
			pairs = append(pairs, `="`+urlPath+`"`, `="`+assets.Path(name)+`"`)
		}
	}
	return strings.NewReplacer(append(pairs, `="/favicon.ico"`, `="`+assets.Path("favicon.ico")+`"`)...)
}

func newAsset(name string, body []byte) (*asset, error) {
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:8])
	a := &asset{
		body:         body,
		etag:         `"` + tag + `"`,
		gzipETag:     `"` + tag + `-gzip"`,
		contentType:  contentTypes[path.Ext(name)],
		cacheControl: staticCacheControl,
	}
	if a.contentType == "" {
		if a.contentType = mime.TypeByExtension(path.Ext(name)); a.contentType == "" {
			a.contentType = http.DetectContentType(body)
		}
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	zw.Write(body)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() < len(body) {
		a.gzipped = buf.Bytes()
	}
	return a, nil
}

// handleStatic serves the asset at the request's path through
// http.ServeContent, which answers If-None-Match (304), Range (206, 416),
// If-Range and HEAD (RFC 9110 sections 13 and 14). It sends the gzip
// variant, with its own ETag, to clients that accept gzip.
func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	a, cacheControl := s.staticAsset(r.URL.Path)
	if a == nil {
		s.Error(w, r, errNotFoundPage)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", cacheControl)
	body, etag := a.body, a.etag
	if a.gzipped != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			body, etag = a.gzipped, a.gzipETag
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	if h.Get("Content-Encoding") != "" && r.Header.Get("Range") == "" {
		// ServeContent leaves Content-Length out when Content-Encoding is
		// set; a whole gzip body's length is known, so send it.
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// staticAsset returns the asset at urlPath and its Cache-Control, or nil:
// a hashed name of a file we have whose hash is another release's gets
// the current file, with staleHashCacheControl.
func (s *Server) staticAsset(urlPath string) (*asset, string) {
	if a, ok := s.static[urlPath]; ok {
		return a, a.cacheControl
	}
	hashed, ok := strings.CutPrefix(urlPath, "/static/")
	if !ok {
		return nil, ""
	}
	if name, ok := assets.Unhash(hashed); ok && assets.Path(name) != "/static/"+name {
		return s.static[assets.Path(name)], staleHashCacheControl
	}
	return nil, ""
}

// acceptsGzip reports whether Accept-Encoding field values accept gzip
// (RFC 9110 section 12.5.3): "gzip" or "x-gzip" with a qvalue above 0, or
// else "*" with a qvalue above 0. Codings are case-insensitive; an element
// with a malformed qvalue is ignored. No header at all means no gzip.
func acceptsGzip(values []string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, v := range values {
		for _, elem := range strings.Split(v, ",") {
			coding, q, ok := parseCoding(elem)
			switch {
			case !ok:
			case coding == "gzip" || coding == "x-gzip":
				gzipQ = max(gzipQ, q)
			case coding == "*":
				starQ = max(starQ, q)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}

// parseCoding parses one Accept-Encoding element, "gzip;q=0.5", into its
// lower-cased coding and qvalue (1 when absent).
func parseCoding(elem string) (coding string, q float64, ok bool) {
	coding, params, _ := strings.Cut(elem, ";")
	coding = strings.ToLower(strings.TrimSpace(coding))
	if coding == "" {
		return "", 0, false
	}
	q = 1
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || f < 0 || f > 1 {
			return "", 0, false
		}
		q = f
	}
	return coding, q, true
}
