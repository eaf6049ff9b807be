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
	"github.com/statesecrets/server/assets/templates"
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
	send(w, status, buf)
}

// renderPage renders page for v into a buffer first, so that an error
// becomes a clean 500 rather than half a page, and sends it with its
// Content-Length. Rendered pages are never cached: they are per player.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, v *templates.View, page templates.Page) {
	buf := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(buf)
	buf.Reset()
	if err := page.Render(v).Render(r.Context(), buf); err != nil {
		s.log.Error("render", "page", v.Function, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	send(w, status, buf)
}

// send writes buf as the HTML body of a status response.
func send(w http.ResponseWriter, status int, buf *bytes.Buffer) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
