package handlers_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/statesecrets/server/game"

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

	// A writer past the allowance is told the limit, and what was typed comes back.
	for range game.MessageBurst {
		_, err := e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Message, To: "mulder", Body: "Boo."})
		require.NoError(t, err)
	}
	page, refusal = e.client().refused("/game?function=messages&tid="+ktid, url.Values{"function": {"message"},
		"to": {"mulder"}, "body": {"One more."}})
	assert.Equal(t, fmt.Sprintf("You may send at most %d messages at once, then one every %d seconds: wait %d more seconds before writing again.",
		game.MessageBurst, int(game.MessageEvery/time.Second), int(game.MessageEvery/time.Second)), refusal)
	assert.Contains(t, page, ">One more.</textarea>")
}

func TestHQDigest(t *testing.T) {
	// Ensure HQ tells a player coming back after ticks what happened
	// meanwhile, once: a reload within the tick shows it no more.
	e, tid, mulder, krycek := twoPlayers(t)
	hq := "/game?function=hq&tid=" + tid
	_, page := e.client().get(hq)
	assert.NotContains(t, page, "While you were away")
	e.clock.Add(3 * 10 * time.Minute)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Spy, TargetID: mulder.ID})
	require.NoError(t, err)
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.Message, To: "mulder", Body: "Boo."})
	require.NoError(t, err)
	_, page = e.client().get(hq)
	assert.Contains(t, page, `<h2 id="digest-title">While you were away</h2>`)
	assert.Contains(t, page, "Since your last visit at tick 0 (30 min ago):")
	assert.Contains(t, page, "2 lines on your wire")
	assert.Contains(t, page, "1 unread message")
	assert.Contains(t, page, "A private message from krycek (MIB): Boo.")
	// Nothing to read is said plainly and links nowhere: no "0 posts on
	// the board ." with a link to an empty board.
	digest := page[strings.Index(page, `id="digest-title"`):]
	digest = digest[:strings.Index(digest, "</p>")]
	assert.Contains(t, digest, "no posts on the board and <a")
	assert.NotContains(t, digest, " .")
	assert.NotContains(t, digest, "function=board")
	assert.Equal(t, "Since your last visit at tick 0 (30 min ago): 2 lines on your wire, 1 line in the news, no posts on the board and 1 unread message.",
		digestText(page))
	_, page = e.client().get(hq)
	assert.NotContains(t, page, "While you were away")
	e.clock.Add(3 * 10 * time.Minute) // ticks pass, nothing happens
	_, page = e.client().get(hq)
	assert.NotContains(t, page, "While you were away", "an empty digest is left out")
}

func TestHQDigestSentence(t *testing.T) {
	// Ensure the digest reads as a sentence without unread messages too:
	// a space after each comma and before each "and", none before the
	// full stop (it read "on your wire,1 line in the newsand no posts on
	// the board .").
	e, tid, _, krycek := twoPlayers(t)
	hq := "/game?function=hq&tid=" + tid
	e.client().get(hq)
	e.clock.Add(3 * 10 * time.Minute)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	_, err = e.store.Act(t.Context(), krycek.ID, game.Action{Kind: game.PostMessage, Body: "The truth is out there."})
	require.NoError(t, err)
	_, page := e.client().get(hq)
	assert.Regexp(t, `^Since your last visit at tick 0 \(30 min ago\): \d+ lines? on your wire, (no lines|\d+ lines?) in the news and 1 post on the board\.$`,
		digestText(page))
}

// digestText is the sentence of HQ's digest, tags removed and spaces
// collapsed as a browser shows them.
func digestText(page string) string {
	i := strings.Index(page, `id="digest-title"`)
	if i < 0 {
		return ""
	}
	p := page[i:]
	p = p[strings.Index(p, "<p>")+len("<p>"):]
	p = p[:strings.Index(p, "</p>")]
	p = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(p, "")
	return strings.Join(strings.Fields(html.UnescapeString(p)), " ")
}
