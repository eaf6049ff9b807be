package handlers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// The live layer's limits: what opening, resuming and holding streams may
// cost, and how a page is told to stop.

// getEvents sends GET target as an EventSource would (Accept:
// text/event-stream) unless plain, and returns the answer read whole: for
// a refused or ended stream, it ends at once.
func getEvents(t *testing.T, target string, plain bool) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(t, err)
	if !plain {
		req.Header.Set("Accept", "text/event-stream")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the answer ends at once")
	return resp, string(body)
}

// ended waits for the server to end st, failing after 5 s.
func ended(t *testing.T, st *testkit.EventStream) {
	t.Helper()
	for {
		select {
		case <-st.Events:
		case err := <-st.Done:
			assert.ErrorIs(t, err, io.EOF, "the server ended the stream")
			return
		case <-time.After(5 * time.Second):
			require.FailNow(t, "the stream is still open")
		}
	}
}

func TestLiveResumeReplaysFirst(t *testing.T) {
	// Ensure a resuming stream's hello carries no id (a drop after it
	// resumes from where the browser was), the replay follows with each
	// change's id, and only then an id-only message moves Last-Event-ID to
	// the cursor; a fresh stream's hello carries the cursor.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	events := base + "/game/events?tid=" + tid
	first := openStream(t, events, "")
	hello := first.Next(t)
	require.NotEmpty(t, hello.ID)
	_, bobTID := e.player("bob", game.MIB)
	resp, body := e.remoteClient(base).act("/game?function=board&tid="+bobTID, url.Values{"function": {"post"}, "body": {"hi"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	first.Until(t, "post")
	last, err := e.store.LastChange(t.Context())
	require.NoError(t, err)
	cursor := strconv.FormatInt(last, 10) // past bob's own feed line, which alice never sees

	req, err := http.NewRequest(http.MethodGet, events, nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", hello.ID)
	r, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resumed := testkit.ReadEvents(t, r, testkit.EventsOptions{IDs: true})
	h := resumed.Next(t)
	assert.Equal(t, "hello", h.Event)
	assert.Empty(t, h.ID, "the hello of a resume moves no id")
	var got []string
	replay := resumed.Until(t, "id")
	for _, ev := range replay {
		got = append(got, ev.Event)
	}
	assert.Equal(t, []string{"news", "player", "post", "id"}, got, "bob's enlisting and post, then the id")
	assert.Equal(t, cursor, replay[len(replay)-1].ID, "the id message moves Last-Event-ID to the cursor")
}

func TestLiveEndedSession(t *testing.T) {
	// Ensure a stream whose session ended is answered 204 No Content
	// (EventSource stops reconnecting), for an expired session and for
	// none, and an open stream of an expired session gets the logout event
	// before it ends.
	e := newEnv(t)
	_, tid := e.player("scully", game.FBI)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+tid, "")
	require.Equal(t, "hello", s.Next(t).Event)
	e.clock.Add(game.DefaultSessionTTL)
	s.Until(t, "logout")
	ended(t, s)
	resp, body := getEvents(t, base+"/game/events?tid="+tid, false)
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Empty(t, body)
	resp, _ = getEvents(t, base+"/game/events", false) // no session at all
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
}

func TestLiveLogoutEverywhere(t *testing.T) {
	// Ensure "Log out everywhere" tells the player's other sessions' pages
	// why their live updates stop (a logout event), and ends them.
	e := newEnv(t)
	alice, tid := e.player("alice", game.FBI)
	other, err := e.store.CreateSession(t.Context(), alice.ID)
	require.NoError(t, err)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+other.ID, "")
	require.Equal(t, "hello", s.Next(t).Event)

	c := e.remoteClient(base)
	_, page := c.get("/logout?tid=" + tid)
	resp, _ := c.post("/logout?tid="+tid, url.Values{"csrf": {csrf(t, page)}, "everywhere": {"1"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "logout", s.Next(t).Event)
	ended(t, s)
}

func TestLiveTabsStopPolitely(t *testing.T) {
	// Ensure a session over LiveStreamsPerSession stops its oldest stream
	// with a stop event (the page stops reconnecting instead of closing
	// another tab's), and keeps the others.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	var tabs []*testkit.EventStream
	for range handlers.LiveStreamsPerSession + 1 {
		st := openStream(t, base+"/game/events?tid="+tid, "")
		require.Equal(t, "hello", st.Next(t).Event)
		tabs = append(tabs, st)
	}
	stop := tabs[0].Next(t)
	assert.Equal(t, "stop", stop.Event)
	assert.JSONEq(t, `{"reason":"tabs"}`, stop.Data)
	ended(t, tabs[0])
	select {
	case err := <-tabs[1].Done:
		t.Fatalf("the second tab ended too: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestLiveAddressCap(t *testing.T) {
	// Ensure streams from one address stop at LiveStreamsPerAddress: the
	// next is refused, to an EventSource with its retry field and a stop
	// event, to other clients with 429 and Retry-After, and the
	// address's open streams stay open.
	e := newEnv(t)
	base := serveLoop(t, e)
	perPlayer := handlers.LiveStreamsPerSession
	var streams []*testkit.EventStream
	for i := 0; len(streams) < handlers.LiveStreamsPerAddress; i++ {
		_, tid := e.player("agent"+strconv.Itoa(i), game.FBI)
		for range perPlayer {
			if len(streams)%handlers.LiveOpenBurstAddress == handlers.LiveOpenBurstAddress-1 {
				e.clock.Add(time.Minute) // refill the address's bucket: this is about the cap
			}
			st := openStream(t, base+"/game/events?tid="+tid, "")
			require.Equal(t, "hello", st.Next(t).Event)
			streams = append(streams, st)
		}
	}
	_, tid := e.player("late", game.MIB)
	resp, body := getEvents(t, base+"/game/events?tid="+tid, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(body, "retry: "), body)
	assert.Contains(t, body, "event: stop\ndata: {\"reason\":\"address\"}\n\n")
	resp, _ = getEvents(t, base+"/game/events?tid="+tid, true)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	for _, st := range streams {
		select {
		case err := <-st.Done:
			t.Fatalf("an open stream of the address ended: %v", err)
		default:
		}
	}
}

func TestLiveOpenRate(t *testing.T) {
	// Ensure one session opens at most LiveOpenBurstSession streams at
	// once: the next is told when to come back, to an EventSource by the
	// retry field of a body that ends at once, to other clients by 429 and
	// Retry-After; after the refill it opens again.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	events := base + "/game/events?tid=" + tid
	for range handlers.LiveOpenBurstSession {
		st := openStream(t, events, "")
		require.Equal(t, "hello", st.Next(t).Event)
	}
	resp, body := getEvents(t, events, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "retry: "+strconv.Itoa(int(handlers.LiveOpenRefillSession.Milliseconds()))+"\n\n", body)
	resp, _ = getEvents(t, events, true)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	e.clock.Add(handlers.LiveOpenRefillSession)
	st := openStream(t, events, "")
	assert.Equal(t, "hello", st.Next(t).Event)
}

func TestLiveLifetime(t *testing.T) {
	// Ensure a stream ends after LiveStreamLifetime with a renew event and
	// a retry hint, so the browser reconnects at once and quietly.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+tid, "")
	require.Equal(t, "hello", s.Next(t).Event)
	e.clock.Add(handlers.LiveStreamLifetime / 2)
	select {
	case ev := <-s.Events:
		t.Fatalf("an event at half the lifetime: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
	e.clock.Add(handlers.LiveStreamLifetime / 2)
	assert.Equal(t, "renew", s.Next(t).Event)
	ended(t, s)
}

func TestLiveSpreadDelivery(t *testing.T) {
	// Ensure a run of changes sent over several polls (one stream a poll
	// here) reaches every stream once, each tick with its player's own
	// figures, and that a stream opened while it is under way gets it once
	// if its hello is before it, never twice.
	t.Cleanup(handlers.SetLiveShareMax(1)) // first, so it runs after the server stopped
	e := newEnv(t)
	base := serveLoop(t, e)
	players := map[string]*game.Player{}
	streams := map[string]*testkit.EventStream{}
	for _, name := range []string{"alice", "bob", "carol"} {
		p, tid := e.player(name, game.FBI)
		players[name] = p
		streams[name] = openStream(t, base+"/game/events?tid="+tid, "")
		require.Equal(t, "hello", streams[name].Next(t).Event)
	}
	dave, daveTID := e.player("dave", game.MIB)
	e.clock.Add(game.DefaultTickInterval)
	_, err := e.store.Tick(t.Context())
	require.NoError(t, err)
	late := openStream(t, base+"/game/events?tid="+daveTID, "")
	lateHello := late.Next(t)
	require.Equal(t, "hello", lateHello.Event)
	tickID, err := e.store.LastChange(t.Context())
	require.NoError(t, err)
	players["dave"], streams["dave"] = dave, late

	for name, s := range streams {
		ticks := 0
		for quiet := false; !quiet; {
			select {
			case ev := <-s.Events:
				if ev.Event != "tick" {
					continue
				}
				ticks++
				d := data(t, []testkit.Event{ev}, "tick")
				me := d["me"].(map[string]any)
				assert.Equal(t, float64(e.stats(players[name].ID).AP), me["ap"], name)
			case <-time.After(300 * time.Millisecond):
				quiet = true
			}
		}
		hello, _ := strconv.ParseInt(lateHello.ID, 10, 64)
		if name == "dave" && hello >= tickID {
			assert.Zero(t, ticks, "dave opened after the tick: his page has it")
		} else {
			assert.Equal(t, 1, ticks, name)
		}
	}
}

func TestLiveReopenAfterClosedTabs(t *testing.T) {
	// Ensure a player who opens a stream while two older ones of theirs,
	// from another address (a laptop, a phone that changed networks),
	// were closed by the client and not yet forgotten gets its hello.
	// makeRoom forgot the closed streams while ranging over the player's
	// own slice, which forget compacts in place, and read a nil
	// *liveClient: the open panicked. REGRESSION: fails on main.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	events := base + "/game/events?tid=" + tid
	laptop := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	var tabs []*testkit.EventStream
	for range 3 {
		req, err := http.NewRequest(http.MethodGet, events, nil)
		require.NoError(t, err)
		r, err := laptop.Do(req)
		require.NoError(t, err)
		st := testkit.ReadEvents(t, r, testkit.EventsOptions{})
		require.Equal(t, "hello", st.Next(t).Event)
		tabs = append(tabs, st)
	}
	tabs[0].Close()
	tabs[1].Close()
	time.Sleep(200 * time.Millisecond) // the loop sees both hang-ups; the hub has not yet
	again := openStream(t, events, "") // from 127.0.0.1: its address has none to prune
	assert.Equal(t, "hello", again.Next(t).Event, "the new stream is served")
	select {
	case err := <-tabs[2].Done:
		t.Fatalf("the open tab ended: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}
