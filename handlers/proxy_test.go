package handlers_test

import (
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
)

// TestSharedAuthLimit: with SharedAuthLimit, two Servers on two Stores over
// one file (two worker processes) count a client together.
func TestSharedAuthLimit(t *testing.T) {
	const alice = "192.0.2.10:40000"
	e := newEnv(t)
	e.player("skinner", game.FBI)
	var srvs []*handlers.Server
	for range 2 {
		store, err := game.Open(e.path, game.Options{BcryptCost: bcrypt.MinCost, Now: e.clock.Now, Rand: rand.New(rand.NewPCG(3, 4))})
		require.NoError(t, err)
		t.Cleanup(func() { store.Close() })
		srv, err := handlers.New(store, handlers.Options{HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey,
			Now: e.clock.Now, SharedAuthLimit: true})
		require.NoError(t, err)
		srvs = append(srvs, srv)
	}
	c := e.client()
	for i := range handlers.AuthBurst {
		c.h = srvs[i%2]
		resp, page := c.loginFrom(alice, "skinner", "wrong-password", nil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "attempt %d: %s", i+1, page)
	}
	for _, srv := range srvs {
		c.h = srv
		resp, page := c.loginFrom(alice, "skinner", "password-skinner", nil)
		requireLimited(t, c, resp, page, int(handlers.AuthRefill.Seconds()))
	}
	e.clock.Add(handlers.AuthRefill)
	resp, _ := c.loginFrom(alice, "skinner", "password-skinner", nil)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode, "one refill later")
}

// TestSecureBehindProxy: the session cookie is Secure when a trusted proxy
// says the client came over TLS (X-Forwarded-Proto: https), and only then.
func TestSecureBehindProxy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trust  bool
		proto  []string
		secure bool
	}{
		{"Trusted", true, []string{"https"}, true},
		{"TrustedLastValue", true, []string{"http", "https"}, true},
		{"TrustedPlainHTTP", true, []string{"http"}, false},
		{"TrustedSpoofedInFront", true, []string{"https, http"}, false},
		{"TrustedNoHeader", true, nil, false},
		{"Untrusted", false, []string{"https"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.player("skinner", game.FBI)
			srv, err := handlers.New(e.store, handlers.Options{
				HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey, Now: e.clock.Now, TrustProxy: tc.trust})
			require.NoError(t, err)
			c := e.client()
			c.h = srv
			h := http.Header{"X-Forwarded-For": {"203.0.113.5"}}
			if tc.proto != nil {
				h["X-Forwarded-Proto"] = tc.proto
			}
			resp, page := c.loginFrom("127.0.0.1:50000", "skinner", "password-skinner", h)
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, page)
			var session *http.Cookie
			for _, ck := range resp.Cookies() {
				if ck.Name == "ss_session" {
					session = ck
				}
			}
			require.NotNil(t, session, "a session cookie")
			assert.Equal(t, tc.secure, session.Secure)
		})
	}
}
