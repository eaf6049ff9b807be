// Package memfs serves a snapshot of a directory from memory: every regular
// file under the root is read once, at Load, so serving costs no system
// call beyond the socket's (the role nginx's open_file_cache plays). Range,
// If-None-Match, If-Modified-Since and the other conditional requests of
// RFC 9110 sections 13 and 14 are answered by http.ServeContent; a plain
// GET or HEAD, served by package gameserver, by a response prepared at
// Load (gameserver.PreparedHandler), which costs no allocation.
package memfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// Handler serves the snapshot taken by Load. It is safe for concurrent use.
type Handler struct {
	files    map[string]*file                // by URL path: "/index.html"
	prepared map[string]*gameserver.Prepared // by request path: "/index.html", and "/" for it
	readers  sync.Pool                       // *bytes.Reader
}

// file is one snapshot entry. The header values are built once, so a
// request does not allocate them.
type file struct {
	name    string
	data    []byte
	modTime time.Time
	ctype   []string             // Content-Type
	etag    []string             // ETag: a strong validator from the content's SHA-256
	lastMod []string             // Last-Modified
	length  []string             // Content-Length
	plain   *gameserver.Prepared // the answer to a plain GET or HEAD (see Handler.ServeHTTP)
}

// Load reads every regular file under root into memory. Changes to root
// after Load are not seen.
func Load(root string) (*Handler, error) {
	h := &Handler{files: make(map[string]*file), prepared: make(map[string]*gameserver.Prepared)}
	h.readers.New = func() any { return new(bytes.Reader) }
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f, err := readFile(p)
		if err != nil {
			return err
		}
		name := "/" + filepath.ToSlash(rel)
		h.files[name] = f
		h.prepared[name] = f.plain
		if path.Base(name) == "index.html" {
			h.prepared[strings.TrimSuffix(name, "index.html")] = f.plain
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memfs: %w", err)
	}
	return h, nil
}

func readFile(p string) (*file, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	f := &file{
		name: filepath.Base(p), data: data, modTime: info.ModTime(),
		etag:    []string{`"` + hex.EncodeToString(sum[:12]) + `"`},
		lastMod: []string{info.ModTime().UTC().Format(http.TimeFormat)},
		length:  []string{strconv.Itoa(len(data))},
	}
	if ct := mime.TypeByExtension(filepath.Ext(p)); ct != "" {
		f.ctype = []string{ct}
	} else {
		f.ctype = []string{http.DetectContentType(data)}
	}
	f.plain = gameserver.Prepare(http.Header{
		"Content-Type": f.ctype, "Etag": f.etag, "Accept-Ranges": acceptRanges, "Last-Modified": f.lastMod,
	}, data)
	return f, nil
}

// ServeHTTP answers GET and HEAD for files in the snapshot; a path ending
// in "/" means its index.html. Anything else is 404 Not Found, or 405 Method
// Not Allowed for other methods.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed: the file server answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	f := h.lookup(r.URL.Path)
	if f == nil {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr["Content-Type"] = f.ctype
	hdr["Etag"] = f.etag
	if plain(r) {
		// What ServeContent would answer, without its per-request work.
		hdr["Accept-Ranges"] = acceptRanges
		hdr["Last-Modified"] = f.lastMod
		hdr["Content-Length"] = f.length
		if r.Method == http.MethodGet {
			w.Write(f.data)
		}
		return
	}
	rd := h.readers.Get().(*bytes.Reader)
	rd.Reset(f.data)
	http.ServeContent(w, r, f.name, f.modTime, rd)
	rd.Reset(nil)
	h.readers.Put(rd)
}

var acceptRanges = []string{"bytes"}

// Prepared returns the response to a plain GET or HEAD of path, the one
// ServeHTTP would give (gameserver.PreparedHandler), or nil for a path
// not in the snapshot.
func (h *Handler) Prepared(path []byte) *gameserver.Prepared { return h.prepared[string(path)] }

// plain reports whether r has no header that asks for a part of the file
// or makes the answer conditional (RFC 9110 sections 13.1 and 14.2).
func plain(r *http.Request) bool {
	for _, k := range [...]string{"Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since"} {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	return true
}

// lookup finds the file for a URL path.
func (h *Handler) lookup(p string) *file {
	if f, ok := h.files[p]; ok {
		return f
	}
	if p == "" || p[len(p)-1] == '/' {
		return h.files[path.Clean(p+"/index.html")]
	}
	return h.files[path.Clean(p)]
}
