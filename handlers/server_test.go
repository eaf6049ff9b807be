package handlers_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
)

func TestNew(t *testing.T) {
	t.Run("ErrKeys", func(t *testing.T) {
		// Ensure keys too short for HMAC-SHA256 or of no AES size are refused at start-up.
		e := newEnv(t)
		for name, opts := range map[string]handlers.Options{
			"short hash key":  {HashKey: make([]byte, 16), BlockKey: blockKey, CSRFKey: csrfKey},
			"odd block key":   {HashKey: hashKey, BlockKey: make([]byte, 20), CSRFKey: csrfKey},
			"short csrf key":  {HashKey: hashKey, BlockKey: blockKey, CSRFKey: make([]byte, 8)},
			"empty block key": {HashKey: hashKey, BlockKey: []byte{}, CSRFKey: csrfKey},
		} {
			_, err := handlers.New(e.store, opts)
			assert.Error(t, err, name)
		}
	})

	t.Run("StoreKeys", func(t *testing.T) {
		// Ensure two Servers on one store agree on the keys it keeps: a cookie from one works on the other.
		e := newEnv(t)
		one, err := newServerWithStoreKeys(e)
		require.NoError(t, err)
		two, err := newServerWithStoreKeys(e)
		require.NoError(t, err)
		e.srv = one
		c := e.client()
		c.enlist("mulder", game.FBI)
		c.h = two
		resp, _ := c.get("/game?function=hq")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})
}

func TestSecureCookies(t *testing.T) {
	// Ensure cookies are Secure on a TLS request, or always with Options.Secure.
	e := newEnv(t)
	secure, err := handlers.New(e.store, handlers.Options{HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey, Secure: true})
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		h      http.Handler
		target string
		want   bool
	}{
		"plain":          {e.srv, "/register", false},
		"TLS":            {e.srv, "https://game.test/register", true},
		"Options.Secure": {secure, "/register", true},
	} {
		c := e.client()
		c.h = tc.h
		resp, _ := c.get(tc.target)
		require.NotEmpty(t, resp.Cookies(), name)
		for _, ck := range resp.Cookies() {
			assert.Equal(t, tc.want, ck.Secure, "%s: %s", name, ck.Name)
			assert.True(t, ck.HttpOnly, "%s: %s", name, ck.Name)
		}
	}
}

func TestInternalError(t *testing.T) {
	// Ensure a store failure is a 500 page saying only "Internal error.", with the real error in the log.
	e := newEnv(t)
	_, tid := e.player("mulder", game.FBI)
	var log bytes.Buffer
	srv, err := handlers.New(e.store, handlers.Options{
		HashKey: hashKey, BlockKey: blockKey, CSRFKey: csrfKey,
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	require.NoError(t, err)
	require.NoError(t, e.store.Close())
	c := e.client()
	c.h = srv
	resp, page := c.get("/game?function=hq&tid=" + tid)
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.Contains(t, page, "Internal error.")
	assert.NotContains(t, page, "closed")
	assert.Contains(t, log.String(), "is closed")
	assert.Contains(t, log.String(), "path=/game")
	assert.NotContains(t, log.String(), tid, "the tid is a credential: it stays out of the log")

	resp, _ = c.post("/login", url.Values{})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "refused before the store is asked")
}
