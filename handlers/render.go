package handlers

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/statesecrets/server/assets/templates"
)

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render renders page for v into a buffer first, so that an error becomes
// a clean 500 rather than half a page, and sends it with its
// Content-Length. Rendered pages are never cached: they are per player.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, v *templates.View, page templates.Page) {
	buf := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(buf)
	buf.Reset()
	if err := page.Render(v).Render(r.Context(), buf); err != nil {
		s.log.Error("render", "page", v.Function, "err", err)
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
