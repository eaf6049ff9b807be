package handlers_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// FuzzAcceptEncoding: whatever Accept-Encoding says, /static/style.css is
// 200 and its body, decoded as Content-Encoding says, is the file.
func FuzzAcceptEncoding(f *testing.F) {
	for _, seed := range []string{"", "gzip", "gzip;q=0", "*;q=0.5, gzip;q=0", "x-gzip;q=1.0", "br, deflate", ";;,,q=", "gzip;q=1e3"} {
		f.Add(seed)
	}
	e := newEnv(f)
	css := staticFile(f, "style.css")
	f.Fuzz(func(t *testing.T, header string) {
		resp, body := serve(t, e.srv, "GET", "/static/style.css", map[string]string{"Accept-Encoding": header})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			require.NoError(t, err)
			body, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		require.Equal(t, css, body)
	})
}

// FuzzAction: whatever an action form holds, with a valid CSRF token, the
// answer is a redirect or a refusal (400, 404), never a 500; and a refusal
// changes nothing.
func FuzzAction(f *testing.F) {
	for _, seed := range [][4]string{
		{"recruit", "", "", ""}, {"haggle", "1", "", "50"}, {"haggle", "x", "", "1e9"}, {"spy", "", "2", ""},
		{"steal", "", "-1", ""}, {"post", "", "", "hello"}, {"post", "", "", " "}, {"bribe", "", "", ""}, {"", "", "", ""},
		{"haggle", "99999999999999999999", "", "99999999999999999999"}, {"spy", "", "1", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	e := newEnv(f)
	mulder, tid := e.player("mulder", game.FBI)
	e.player("krycek", game.MIB)
	token := tokenOf(f, e, tid)
	f.Fuzz(func(t *testing.T, function, source, target, value string) {
		form := url.Values{"csrf": {token}, "function": {function}, "source": {source}, "target": {target},
			"offer": {value}, "body": {value}}
		before, err := e.store.Player(t.Context(), mulder.ID)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, formRequest("/game?tid="+tid, form))
		switch rec.Code {
		case http.StatusSeeOther:
		case http.StatusBadRequest, http.StatusNotFound:
			after, err := e.store.Player(t.Context(), mulder.ID)
			require.NoError(t, err)
			require.Equal(t, before, after, "a refused action changed the player")
		default:
			t.Fatalf("status %d for %v", rec.Code, form)
		}
	})
}
