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

// Cache lifetimes. The front page is revalidated on every use (a cheap 304
// by ETag) so a new release shows at once; the files under /static/ and
// the favicon may be reused for an hour without asking.
const (
	frontCacheControl  = "public, no-cache"
	staticCacheControl = "public, max-age=3600"
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

// loadStatic reads every file of assets.Static and keys it by the URL path
// it is served at: /static/NAME, plus / for index.html and /favicon.ico.
func loadStatic() (map[string]*asset, error) {
	out := make(map[string]*asset)
	err := fs.WalkDir(assets.Static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(assets.Static, name)
		if err != nil {
			return err
		}
		a, err := newAsset(name, body)
		if err != nil {
			return err
		}
		out["/static/"+name] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("handlers: static assets: %w", err)
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
	a, ok := s.static[r.URL.Path]
	if !ok {
		s.Error(w, r, errNotFoundPage)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", a.cacheControl)
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
