package handlers_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMessages(t *testing.T) {
	// Ensure a private message goes to the thread, counts unread on the
	// recipient's Messages tab until they open it, and a refused one comes
	// back to the form with what was typed.
	e, tid, _, krycek := twoPlayers(t)
	c := e.client()
	resp, body := c.act("/game?function=messages&tid="+tid, url.Values{"function": {"message"}, "to": {"krycek"},
		"body": {"The truth is out there."}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	assert.Equal(t, "/game?function=messages&with=krycek&tid="+tid, location(resp))
	_, page := c.get(location(resp))
	assert.Contains(t, page, "The truth is out there.")
	assert.Contains(t, page, "Your message to krycek is on its way.")

	ktid := e.tid(krycek.ID)
	unread := `data-unread="messages"><span data-part="n">1</span>`
	_, hq := e.client().get("/game?function=hq&tid=" + ktid)
	assert.Contains(t, hq, unread)
	assert.Contains(t, hq, "A private message from mulder (FBI): The truth is out there.")
	_, inbox := e.client().get("/game?function=messages&tid=" + ktid)
	assert.Contains(t, inbox, "1 unread")
	_, thread := e.client().get("/game?function=messages&with=mulder&tid=" + ktid)
	assert.Contains(t, thread, "The truth is out there.")
	assert.Contains(t, thread, `data-unread="messages" hidden>`, "the thread read it")

	page, refusal := e.client().refused("/game?function=messages&tid="+tid, url.Values{"function": {"message"},
		"to": {"nobody"}, "body": {"Hello?"}})
	assert.Equal(t, `There is no agent called "nobody" to write to.`, refusal)
	assert.Contains(t, page, `value="nobody"`)
	assert.Contains(t, page, ">Hello?</textarea>")
	resp, _ = e.client().get("/game?function=messages&with=nobody&tid=" + tid)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
