package main

import (
	"net/http"
	"net/netip"

	"github.com/statesecrets/server/handlers"
)

// realIP, with -trust-proxy, sets each request's RemoteAddr to the client
// address the proxy appended to X-Forwarded-For (port 0: the proxy does not
// say), as nginx's realip module does, so the access log names the client
// rather than the proxy. Without it, or without the header, h gets the
// request as it came.
func realIP(trustProxy bool, h http.Handler) http.Handler {
	if !trustProxy {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if addr, ok := handlers.ForwardedFor(r); ok {
			r.RemoteAddr = netip.AddrPortFrom(addr, 0).String() // in place: the engine logs this request
		}
		h.ServeHTTP(w, r)
	})
}
