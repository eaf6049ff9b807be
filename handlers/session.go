package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/statesecrets/server/game"
)

// The session id (game.Session.ID, 32 hex digits) is a bearer credential.
// It reaches the server in one of two ways:
//
//   - the session cookie, its value signed (HMAC-SHA256) and encrypted
//     (AES-256-CTR) by gorilla/securecookie under the cookie name, so it can
//     be neither read nor forged nor moved to another cookie; HttpOnly,
//     SameSite=Lax, Path=/, Secure on TLS or when Options.Secure; it expires
//     with the session;
//   - the tid query parameter, as State Secrets addressed its pages
//     (/game?function=hq&tid=...), for clients without cookies such as ab.
//     Pages reached by tid carry it in every link and form action, and
//     every response says Referrer-Policy: no-referrer so it does not leak
//     to other sites.
//
// Either way the store decides: an unknown, expired or deleted (logged-out)
// session is refused and the client sent to /login.
const sessionCookie = "ss_session"

// viewer is who is asking: the player behind the request's session.
type viewer struct {
	player *game.Player // shared with the store's cache: read only
	clock  game.Clock   // the game clock, read with the player
	sid    string
	viaTID bool // the session came in the URL: links must carry it on
}

type viewerKey struct{}

// viewerFrom returns the viewer withViewer stored in r's context, or nil.
func viewerFrom(r *http.Request) *viewer {
	v, _ := r.Context().Value(viewerKey{}).(*viewer)
	return v
}

// withViewer runs h for requests with a valid session and redirects the
// others to /login with 303 See Other. An error h returns goes to Error.
func (s *Server) withViewer(h func(http.ResponseWriter, *http.Request, *viewer) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := s.findViewer(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), viewerKey{}, v))
		if err := h(w, r, v); err != nil {
			s.Error(w, r, err)
		}
	}
}

var errNoSession = game.Errorf(game.EUNAUTHORIZED, "Please log in.")

// findViewer resolves the request's session: the tid parameter if present
// (even when a cookie is too: an explicit, bad tid is refused rather than
// silently replaced), else the cookie.
func (s *Server) findViewer(r *http.Request) (*viewer, error) {
	sid, viaTID := "", false
	if q := r.URL.Query(); q.Has("tid") {
		sid, viaTID = q.Get("tid"), true
	} else if c, err := r.Cookie(sessionCookie); err == nil {
		if s.cookies.Decode(sessionCookie, c.Value, &sid) != nil {
			return nil, errNoSession
		}
	}
	// The store refuses a malformed id (not 32 lowercase hex digits)
	// without a query, and an unknown, expired or deleted one with one.
	p, clock, err := s.store.SessionState(storeContext(r), sid)
	if err != nil {
		return nil, err
	}
	return &viewer{player: p, clock: clock, sid: sid, viaTID: viaTID}, nil
}

// setSessionCookie logs the browser in to sess.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, sess *game.Session) error {
	value, err := s.cookies.Encode(sessionCookie, sess.ID)
	if err != nil {
		return err
	}
	c := s.cookie(r, sessionCookie, value)
	// Max-Age, not Expires: a lifetime measured on the store's clock
	// (Options.Now), whatever the client's clock says.
	c.MaxAge = max(int(sess.Expires.Sub(s.now())/time.Second), 1)
	http.SetCookie(w, c)
	return nil
}

// cookie returns a cookie with the attributes every cookie here shares.
func (s *Server) cookie(r *http.Request, name, value string) *http.Cookie {
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		HttpOnly: true,
		Secure:   s.secure || s.overTLS(r),
		SameSite: http.SameSiteLaxMode,
	}
}

// clearCookie tells the browser to drop the cookie name.
func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	c := s.cookie(r, name, "")
	c.MaxAge = -1
	http.SetCookie(w, c)
}

// storeContext is the context for the store's calls on a request's hot
// paths (its session, a page's reads, an order, a stream's open): the
// request's values without its cancellation. database/sql starts a
// goroutine for each query and transaction whose context can be canceled,
// to close it if the context ends first: on the loop that is a goroutine
// handed to another thread and woken again for every query, about a tenth
// of the server's CPU under make capacity's players. It cancels nothing
// the server needs: the driver never interrupts a query for its context
// (it only ends a wait for another process's lock sooner), and a request
// whose client went away is answered to no one either way.
func storeContext(r *http.Request) context.Context { return context.WithoutCancel(r.Context()) }
