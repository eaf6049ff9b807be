package handlers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"

	"github.com/statesecrets/server/game"
)

// Cross-site request forgery defences, in layers:
//
//  1. Every POST from a session carries its CSRF token in the hidden field
//     "csrf": hex(HMAC-SHA256(CSRFKey, "session\x00" + session id)). It is
//     fixed per session (so pages keep a stable length), unguessable
//     without the key, and dies with the session. Missing or wrong: 403 and
//     nothing is done.
//  2. Login and register POSTs have no session yet: they use a
//     double-submit token. GET /login and GET /register set the cookie
//     ss_form (HttpOnly, SameSite=Lax, 32 random hex digits) and put the
//     same value in the form; the POST must carry both, equal. A forging
//     site can make the browser send the cookie but cannot read it to fill
//     the field.
//  3. Every unsafe request also passes net/http's CrossOriginProtection:
//     a browser's Sec-Fetch-Site other than same-origin or none, or, from
//     a browser that sends no Sec-Fetch-Site (before 2023), an Origin whose
//     host is not the request's Host, gets 403 before any handler runs.
//     Clients that send neither (curl, ab) are let through to the token
//     checks. Behind a reverse proxy the Host compared is the one the
//     proxy passes (deploy/nginx-statesecrets.conf: $host, the name
//     without a port), whatever -trust-proxy says: on a port other than
//     443 only the old browsers' Origin check fails, closed
//     (TestCrossOriginProtection).
const (
	csrfField  = "csrf"
	formCookie = "ss_form"
)

// csrfToken returns the CSRF token of the session sid.
func (s *Server) csrfToken(sid string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	io.WriteString(m, "session\x00")
	io.WriteString(m, sid)
	return hex.EncodeToString(m.Sum(nil))
}

// checkCSRF returns errForbiddenCSRF unless the parsed form of r carries
// the token of the session sid.
func (s *Server) checkCSRF(r *http.Request, sid string) error {
	if !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(s.csrfToken(sid))) {
		return errForbiddenCSRF
	}
	return nil
}

// formToken returns the login-form token of the browser, setting the
// ss_form cookie when it has none (or a malformed one).
func (s *Server) formToken(w http.ResponseWriter, r *http.Request) (string, error) {
	// A form token has the shape of a session id: 32 lowercase hex digits.
	if c, err := r.Cookie(formCookie); err == nil && game.ValidSessionID(c.Value) {
		return c.Value, nil
	}
	b := make([]byte, 16)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return "", fmt.Errorf("handlers: form token: %w", err)
	}
	token := hex.EncodeToString(b)
	http.SetCookie(w, s.cookie(r, formCookie, token))
	return token, nil
}

// checkFormToken returns errForbiddenCSRF unless the parsed form of r
// carries the same token as its ss_form cookie.
func checkFormToken(r *http.Request) error {
	c, err := r.Cookie(formCookie)
	if err != nil || !game.ValidSessionID(c.Value) ||
		!hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(c.Value)) {
		return errForbiddenCSRF
	}
	return nil
}

// crossOrigin refuses cross-site unsafe requests (layer 3 above) with the
// rendered 403 page.
func (s *Server) crossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Error(w, r, errCrossOrigin)
	}))
	return p.Handler(next)
}
