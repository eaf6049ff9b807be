package handlers

import (
	"net/http"
	"runtime/debug"
)

// recoverer turns a panic in a handler into a logged 500. Under the
// gameserver a handler runs on the loop goroutine, where an unrecovered
// panic would take the whole server down with it. http.ErrAbortHandler is
// passed on: it is net/http's way to abort a response on purpose.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			http.Error(w, "Internal error.", http.StatusInternalServerError)
		}()
		next.ServeHTTP(w, r)
	})
}
