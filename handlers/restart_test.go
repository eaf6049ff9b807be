package handlers_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
)

// TestRestart plays a sequence of actions, each acknowledged with a 303,
// then closes the store and reopens the same file behind a new Server, as
// a restart does: every acknowledged effect is there, and the browser's
// cookie still works (the keys came from the store, not from memory).
func TestRestart(t *testing.T) {
	e := newEnv(t)
	// Keys from the store this time, as in production.
	srv, err := newServerWithStoreKeys(e)
	require.NoError(t, err)
	e.srv = srv

	scully := e.client()
	scully.enlist("scully", game.FBI)
	smoker := e.client()
	smoker.enlist("cancerman", game.MIB)

	ranking, err := e.store.Ranking(t.Context())
	require.NoError(t, err)
	var scullyID, smokerID int64
	for _, p := range ranking.Players {
		if p.Name == "scully" {
			scullyID = p.ID
		} else {
			smokerID = p.ID
		}
	}
	for _, form := range []url.Values{
		{"function": {"recruit"}},
		{"function": {"fortify"}},
		{"function": {"spy"}, "target": {strconv.FormatInt(smokerID, 10)}},
		{"function": {"post"}, "body": {"I want to believe."}},
	} {
		resp, body := scully.act("/game?function=hq", form)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	}
	before := e.stats(scullyID)
	news, err := e.store.News(t.Context(), 50)
	require.NoError(t, err)

	e.reopen()
	srv, err = newServerWithStoreKeys(e)
	require.NoError(t, err)
	scully.h = srv

	after := e.stats(scullyID)
	assert.Equal(t, before, after)
	assert.Equal(t, game.StartAgents+1, after.Agents)
	assert.Equal(t, game.StartSecurity+1, after.Security)
	assert.Equal(t, game.StartAP-game.RecruitAP-game.FortifyAP-game.SpyAP, after.AP)
	newsAfter, err := e.store.News(t.Context(), 50)
	require.NoError(t, err)
	assert.Equal(t, news, newsAfter)

	resp, page := scully.get("/game?function=board")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the session cookie survives the restart")
	assert.Contains(t, page, "I want to believe.")
	_, page = scully.get("/game?function=dossiers")
	assert.Contains(t, page, `">cancerman</a></strong>`)
	_, page = scully.get("/game?function=hq")
	assert.Contains(t, page, `<dd data-live="agents">`+strconv.Itoa(after.Agents)+"</dd>")
}
