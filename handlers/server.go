// Package handlers is the HTTP face of State Secrets: routes, sessions,
// CSRF protection, templates and static assets over a *game.Store.
//
// Server is a plain http.Handler. Under cmd/gameserver it runs on the
// gameserver's one loop goroutine, so every handler here blocks every other
// client while it runs: handlers start no goroutines and do no network I/O;
// their cost is SQLite queries and rendering. The one costly step, the
// bcrypt hash of /login and /register (about 70 ms of CPU, see
// BenchmarkLogin), runs on the engine's worker pool (gameserver.Go) while
// the loop serves others; a per-client limit keeps it to AuthBurst at once
// and one per AuthRefill (ratelimit.go), a fair queue gives each client
// its turn at the pool (loginqueue.go), and failed logins slow down the
// account (throttle.go, game/logins.go). Under net/http the same handlers
// run the hash inline. docs/accounts.md has the whole picture.
//
// Routes (registerRoutes; each pattern is also the route label of the
// request durations, routemetrics.go). GET patterns answer HEAD too.
//
//	GET  /{$}             the front page (static, assets/static/index.html)
//	GET  /static/         static assets (static.go)
//	GET  /favicon.ico     the icon
//	GET  /login           the login form
//	POST /login           log in (auth.go)
//	GET  /register        the enlistment form
//	POST /register        enlist
//	GET  /logout          a confirm button
//	POST /logout          end the session
//	GET  /rules           the rules (game/RULES.md)
//	GET  /game            a page: function=NAME (game.go)
//	POST /game            an action: function=NAME (actions.go)
//	GET  /game/events     the viewer's live stream: server-sent events (live.go)
//	GET  /                any other path: the 404 page
//
// Pages, GET /game?function=NAME (hq when absent): hq, sources, dossiers,
// ranking, news, board, feed, hall, profile, reports, messages.
//
// Actions, POST /game with function=NAME: recruit, fortify, rumor, trap,
// sweep, haggle, bid, spy, steal, post, message.
//
// A session is found from the tid query parameter (32 hex digits, the
// State Secrets URL style: /game?function=hq&tid=...) or else from the
// session cookie. See Options for the keys and session.go, csrf.go and
// headers.go for the security decisions.
package handlers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/a-h/templ"
	"github.com/gorilla/securecookie"

	"github.com/statesecrets/server/game"
)

// Options configure a Server. The zero value is the production set-up: keys
// kept in the store (so cookies survive restarts), cookies Secure only on TLS
// requests.
type Options struct {
	// Logger receives internal errors (with the real error, which the page
	// does not show) and recovered panics. nil means slog.Default().
	Logger *slog.Logger

	// HashKey authenticates cookies (HMAC-SHA256 in securecookie): at least
	// 32 bytes, 64 recommended. nil means the store's secret
	// "cookie-hash-key" (64 random bytes created on first use).
	// cmd/gameserver passes STATESECRETS_HASH_KEY here when it is set (hex
	// or base64), and STATESECRETS_BLOCK_KEY as BlockKey, so keys can be
	// set or rotated from outside the database (rotating logs everyone out
	// of their cookies; tid URLs keep working).
	HashKey []byte

	// BlockKey encrypts cookies (AES): 16, 24 or 32 bytes. nil means the
	// store's secret "cookie-block-key" (32 bytes).
	BlockKey []byte

	// CSRFKey keys the HMAC-SHA256 that derives each session's CSRF token:
	// at least 32 bytes. nil means the store's secret "csrf-key" (32 bytes).
	CSRFKey []byte

	// Secure forces the Secure attribute on every cookie, for a server
	// behind a TLS-terminating proxy. false means Secure only when the
	// request came over TLS (r.TLS != nil, or X-Forwarded-Proto: https from
	// a trusted proxy, see TrustProxy).
	Secure bool

	// Now is the clock a new session's cookie lifetime (Max-Age) and the
	// login and register limit are measured on; give the store's clock
	// (game.Options.Now). nil means time.Now.
	Now func() time.Time

	// TrustProxy says the server sits behind one reverse proxy that appends
	// the client's address to X-Forwarded-For (nginx: proxy_set_header
	// X-Forwarded-For $proxy_add_x_forwarded_for). The login and register
	// limit (AuthBurst, AuthRefill) then counts per the last address of that
	// header instead of per RemoteAddr, which would be the proxy's, shared by
	// every client. false (the default) ignores the header: any client can
	// write one. Set it only when nothing but the proxy can reach the server.
	// It also trusts the proxy's X-Forwarded-Proto (nginx: proxy_set_header
	// X-Forwarded-Proto $scheme): "https" there marks cookies Secure, as a
	// request over TLS does.
	TrustProxy bool

	// SharedAuthLimit keeps the login and register limit's buckets in the
	// store (game.Store.TakeToken) instead of this process's memory, so
	// that every process serving the database counts a client together:
	// set it when several workers serve one game. Each attempt then costs
	// one short write transaction besides its bcrypt hash. false (the
	// default) counts in memory, per process.
	SharedAuthLimit bool

	// HashOnLoop runs the bcrypt hash of every login and registration on
	// the loop, in the handler, instead of the engine's worker pool: a
	// teaching switch (the login storm of make loadtest), as a
	// single-threaded server of 2002 did it, so that every other client
	// waits for each hash. No deployment should set it. false (the
	// default) hashes on the pool (see handleLogin and offLoop).
	HashOnLoop bool

	// Rand supplies the random login-form tokens (see csrf.go). nil means
	// crypto/rand.Reader; tests fix it for golden pages. It must be safe
	// for concurrent use if ServeHTTP is called concurrently (it is not
	// under the gameserver).
	Rand io.Reader
}

// Server answers every route of the game. Build it with New. Its handlers
// and PollLive must run one at a time, as the engines run them: on the
// gameserver's loop, or under gameserver.SerialHandler's lock with
// net/http (the live hub, live.go, relies on it and has no lock).
type Server struct {
	store   *game.Store
	log     *slog.Logger
	cookies *securecookie.SecureCookie // session and form-token cookies
	flashes *securecookie.SecureCookie // the same keys, a 60-second life
	csrfKey []byte
	secure  bool
	rand    io.Reader
	now     func() time.Time
	rules   templ.Component   // RULES.md, rendered once
	static  map[string]*asset // by URL path: "/", "/static/style.css", "/favicon.ico"
	handler http.Handler
	routes  *routeMetrics // request durations by route; see routemetrics.go

	live       *liveHub   // the open /game/events streams; see livehub.go
	authLimit  *limiter   // POST /login and /register, per client; see ratelimit.go
	hashes     *hashQueue // their password hashes, fair by client; see loginqueue.go
	trustProxy bool       // count clients by X-Forwarded-For; see Options.TrustProxy
	sharedAuth bool       // the limit's buckets are in the store; see Options.SharedAuthLimit
	hashOnLoop bool       // the teaching switch Options.HashOnLoop; see offLoop
}

// New returns a Server over store. It reads any key not given in opts from
// the store (creating it on first use) and loads and compresses every
// static asset; an error in any of these is returned, so a broken build
// fails at start-up rather than on a player's request (the pages are
// compiled templ components: a broken one does not build at all).
func New(store *game.Store, opts Options) (*Server, error) {
	s := &Server{store: store, log: opts.Logger, secure: opts.Secure, rand: opts.Rand, trustProxy: opts.TrustProxy,
		sharedAuth: opts.SharedAuthLimit, hashOnLoop: opts.HashOnLoop,
		authLimit: newLimiter(AuthBurst, AuthRefill, maxAuthClients), hashes: newHashQueue()}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	if s.now = opts.Now; s.now == nil {
		s.now = time.Now
	}
	s.live = newLiveHub(store, s.log, s.now)
	if err := s.initKeys(opts); err != nil {
		return nil, err
	}
	var err error
	if s.rules, err = renderRules(); err != nil {
		return nil, err
	}
	if s.static, err = loadStatic(); err != nil {
		return nil, err
	}
	mux := &routes{ServeMux: http.NewServeMux()}
	s.registerRoutes(mux)
	s.routes = newRouteMetrics(mux.patterns)
	s.handler = s.routes.timed(s.recoverer(securityHeaders(s.crossOrigin(mux))))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

func (s *Server) initKeys(opts Options) error {
	hashKey, err := s.key(opts.HashKey, "cookie-hash-key", 64)
	if err != nil {
		return err
	}
	blockKey, err := s.key(opts.BlockKey, "cookie-block-key", 32)
	if err != nil {
		return err
	}
	if s.csrfKey, err = s.key(opts.CSRFKey, "csrf-key", 32); err != nil {
		return err
	}
	if len(hashKey) < 32 || len(s.csrfKey) < 32 {
		return errors.New("handlers: HashKey and CSRFKey need at least 32 bytes")
	}
	switch len(blockKey) {
	case 16, 24, 32:
	default:
		return fmt.Errorf("handlers: BlockKey has %d bytes; AES needs 16, 24 or 32", len(blockKey))
	}
	s.cookies = securecookie.New(hashKey, blockKey).SetSerializer(securecookie.JSONEncoder{})
	// The store decides when a session ends (expiry, logout); the cookie's
	// own timestamp check would only add a second, different expiry.
	s.cookies.MaxAge(0)
	s.flashes = securecookie.New(hashKey, blockKey).SetSerializer(securecookie.JSONEncoder{})
	s.flashes.MaxAge(flashMaxAge)
	return nil
}

// key returns given, or the store's secret name of size bytes.
func (s *Server) key(given []byte, name string, size int) ([]byte, error) {
	if given != nil {
		return given, nil
	}
	k, err := s.store.Secret(context.Background(), name, size)
	if err != nil {
		return nil, fmt.Errorf("handlers: key %s from the store: %w", name, err)
	}
	return k, nil
}
