package handlers

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/statesecrets/server/assets"
)

// layoutFile defines the "layout" every page executes, and the shared
// "csrf" and "feed" parts; every other file in assets.Templates is a page
// named after its file, defining "content".
const layoutFile = "layout.html"

// parseTemplates parses every page with the layout, once, at start-up.
func parseTemplates() (map[string]*template.Template, error) {
	names, err := fs.Glob(assets.Templates, "*.html")
	if err != nil {
		return nil, fmt.Errorf("handlers: templates: %w", err)
	}
	pages := make(map[string]*template.Template, len(names))
	for _, name := range names {
		if name == layoutFile {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(assets.Templates, layoutFile, name)
		if err != nil {
			return nil, fmt.Errorf("handlers: templates: %w", err)
		}
		pages[strings.TrimSuffix(name, ".html")] = t
	}
	return pages, nil
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render executes page into a buffer first, so that a template error
// becomes a clean 500 rather than half a page, and sends it with its
// Content-Length. Rendered pages are never cached: they are per player.
func (s *Server) render(w http.ResponseWriter, status int, page string, v *view) {
	buf := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(buf)
	buf.Reset()
	if err := s.pages[page].ExecuteTemplate(buf, "layout", v); err != nil {
		s.log.Error("render", "page", page, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
