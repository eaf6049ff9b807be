package handlers

import "net/http"

// contentSecurityPolicy allows this origin's stylesheet, script, images and
// event stream (connect-src, for live.js's EventSource) and nothing else: no
// inline script or style, no frames, no plug-ins, and forms may post only
// here. The pages are built for it: no inline style
// attributes or handlers anywhere.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders sets the headers every response carries:
// Referrer-Policy no-referrer (a page reached by tid must not hand its URL,
// a credential, to the sites it links to), nosniff, no framing and the CSP.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}
