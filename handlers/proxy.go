package handlers

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// ForwardedFor returns the client address a reverse proxy in front of us
// appended to X-Forwarded-For: the last address of the header's last line
// (earlier ones are whatever the client sent). ok is false if there is no
// such header or its last entry is no IP address. Trust it only when the
// proxy is the sole way in (Options.TrustProxy).
func ForwardedFor(r *http.Request) (addr netip.Addr, ok bool) {
	v := r.Header.Values("X-Forwarded-For")
	if len(v) == 0 {
		return netip.Addr{}, false
	}
	addr, err := netip.ParseAddr(lastValue(v))
	return addr, err == nil
}

// lastValue is the last comma-separated element of a field's last line,
// trimmed.
func lastValue(lines []string) string {
	last := lines[len(lines)-1]
	return strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:])
}

// takeAuthToken takes a token from key's login and register bucket: in the
// store when the limit is shared (Options.SharedAuthLimit), else in memory.
// It returns 0 or how long to wait. If the store fails, the attempt is
// counted in memory instead (and the error logged): a database hiccup
// neither opens the door nor locks everyone out.
func (s *Server) takeAuthToken(ctx context.Context, key string) time.Duration {
	if s.sharedAuth {
		wait, err := s.store.TakeToken(ctx, "auth "+key, s.now(), AuthBurst, AuthRefill)
		if err == nil {
			return wait
		}
		s.log.Error("login limit: shared bucket", "err", err)
	}
	return s.authLimit.allow(key, s.now())
}

// overTLS reports whether the client reached us over TLS: the request came
// over TLS itself, or, with Options.TrustProxy, the proxy in front of us
// says so in X-Forwarded-Proto (nginx: proxy_set_header X-Forwarded-Proto
// $scheme). The proxy sets the header whole, so only its last value counts.
// Cookies get the Secure attribute when it holds.
func (s *Server) overTLS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !s.trustProxy {
		return false
	}
	v := r.Header.Values("X-Forwarded-Proto")
	return len(v) > 0 && strings.EqualFold(lastValue(v), "https")
}
