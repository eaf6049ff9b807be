package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
	"github.com/statesecrets/server/internal/testkit"
)

// serveLoop serves e's handlers from a gameserver loop on a loopback port
// (net/http through gameserver.Serial with -engine=nethttp), polling the
// live hub every 10 ms as cmd/gameserver does every LivePollInterval, its
// runs of changes going on at the next turn (SetLiveSoon), each share
// sized to its turn (SetLiveTurn), as there, and returns the base URL. It stops with the test. cfg, if given, is the
// loop's configuration (its Handler is set here; net/http has none).
func serveLoop(t testing.TB, e *env, cfg ...gameserver.Config) string {
	t.Helper()
	var c gameserver.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	srv := e.srv
	addr, soon, turn := serveEngineSoon(t, srv, func() { srv.PollLive(context.Background()) }, c)
	set := make(chan struct{})
	soon(func() { srv.SetLiveSoon(soon); srv.SetLiveTurn(turn); close(set) }) // one at a time with the handlers
	<-set
	return "http://" + addr
}

// remoteClient is a client whose requests go over the network to base, so
// that its handlers run on the server's loop.
func (e *env) remoteClient(base string) *client {
	u, err := url.Parse(base)
	require.NoError(e.tb, err)
	jar, err := cookiejar.New(nil)
	require.NoError(e.tb, err)
	return &client{tb: e.tb, h: httputil.NewSingleHostReverseProxy(u), jar: jar}
}

// openStream opens the stream at target, resuming after lastID unless it is
// empty; with comments, heartbeats are reported too (as events named ":").
func openStream(t *testing.T, target, lastID string, comments ...bool) *testkit.EventStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return testkit.OpenEvents(t, nil, req, testkit.EventsOptions{Comments: len(comments) > 0 && comments[0]})
}

// through is until kind, and then what comes within a coalesced changes'
// interval more (handlers.LiveStateInterval, twice over).
func through(t *testing.T, s *testkit.EventStream, kind string) []testkit.Event {
	t.Helper()
	got := s.Until(t, kind)
	for after := time.After(2*handlers.LiveStateInterval + 100*time.Millisecond); ; {
		select {
		case ev := <-s.Events:
			got = append(got, ev)
		case <-after:
			return got
		}
	}
}

// lastFigures is the last figures ("me") a feed line or tick of evs carried.
func lastFigures(t *testing.T, evs []testkit.Event) (me struct{ AP, Cash int }) {
	t.Helper()
	for _, ev := range evs {
		var d struct{ Me *struct{ AP, Cash int } }
		if (ev.Event == "feed" || ev.Event == "tick") && json.Unmarshal([]byte(ev.Data), &d) == nil && d.Me != nil {
			me = *d.Me
		}
	}
	return me
}

// lastOf is the last event of kind in evs.
func lastOf(evs []testkit.Event, kind string) testkit.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event == kind {
			return evs[i]
		}
	}
	return testkit.Event{}
}

// latestStates is the last data of each player's and source's coalesced
// event in evs, by kind and id: what a page shows of them in the end.
func latestStates(t *testing.T, evs []testkit.Event) map[string]string {
	t.Helper()
	latest := map[string]string{}
	for _, ev := range evs {
		if coalesced(ev) {
			var d struct{ ID int64 }
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &d))
			latest[fmt.Sprint(ev.Event, d.ID)] = ev.Data
		}
	}
	return latest
}

// coalesced reports whether ev is a standing or a source's state, which a
// stream gets coalesced, without an id (handlers.LiveStateInterval).
func coalesced(ev testkit.Event) bool { return ev.Event == "player" || ev.Event == "source" }

func TestLiveEvents(t *testing.T) {
	// Ensure every kind of change reaches an open stream after the action
	// or tick that caused it, in order, with increasing ids; a reconnect
	// with Last-Event-ID resumes with nothing lost or doubled; logging out
	// closes the session's stream.
	e := newEnv(t)
	alice, aliceTID := e.player("alice", game.FBI)
	_, bobTID := e.player("bob", game.MIB)
	base := serveLoop(t, e)
	events := base + "/game/events?tid=" + aliceTID

	s := openStream(t, events, "")
	hello := s.Next(t)
	require.Equal(t, "hello", hello.Event)
	require.NotEmpty(t, hello.ID, "the hello carries the cursor")

	bob := e.remoteClient(base)
	resp, body := bob.act("/game?function=board&tid="+bobTID, url.Values{"function": {"post"}, "body": {"The truth is out there"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	post := s.Until(t, "post")
	var p struct{ Author, Body string }
	require.NoError(t, json.Unmarshal([]byte(post[len(post)-1].Data), &p))
	assert.Equal(t, "bob", p.Author)
	assert.Equal(t, "The truth is out there", p.Body)

	resp, body = bob.act("/game?function=dossiers&tid="+bobTID, url.Values{"function": {"spy"}, "target": {strconv.FormatInt(alice.ID, 10)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	spied := s.Until(t, "feed")
	var feed struct {
		Text  string
		Alert bool
		Me    struct{ AP, Cash int }
	}
	require.NoError(t, json.Unmarshal([]byte(spied[len(spied)-1].Data), &feed))
	assert.True(t, feed.Alert, "someone acted on alice: %s", feed.Text)
	assert.Equal(t, e.stats(alice.ID).Cash, feed.Me.Cash, "her figures come along")

	src := cheapest(t, e)
	resp, body = bob.act("/game?function=sources&tid="+bobTID, url.Values{"function": {"haggle"},
		"source": {strconv.FormatInt(src.ID, 10)}, "offer": {strconv.Itoa(src.Price)}, "price": {strconv.Itoa(src.Price)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	srcEvs := s.Until(t, "source")

	e.clock.Add(game.DefaultTickInterval)
	_, err := e.store.Tick(t.Context()) // as another process's tick would: the hub's poll finds it
	require.NoError(t, err)
	tickEvs := through(t, s, "tick")
	var tick struct {
		Tick int64
		Me   *struct{ AP int }
	}
	require.NoError(t, json.Unmarshal([]byte(lastOf(tickEvs, "tick").Data), &tick))
	assert.Equal(t, int64(1), tick.Tick)
	assert.Nil(t, tick.Me, "the tick left alice's figures as her alert brought them: the tick is everyone's")

	all := append(append(append(post, spied...), srcEvs...), tickEvs...)
	assert.Equal(t, e.stats(alice.ID).AP, lastFigures(t, all).AP, "the masthead follows her figures")
	last := int64(0)
	for _, ev := range all {
		if coalesced(ev) {
			assert.Empty(t, ev.ID, "a coalesced change comes without an id: %+v", ev)
			continue
		}
		id, err := strconv.ParseInt(ev.ID, 10, 64)
		require.NoError(t, err, "every other change has an id: %+v", ev)
		assert.Greater(t, id, last, "ids increase")
		last = id
	}

	// Resume from the post: everything after it comes again, once each, in
	// order, and each standing and source ends as it did live.
	resumed := openStream(t, events, post[len(post)-1].ID)
	require.Equal(t, "hello", resumed.Next(t).Event)
	var want, got []string
	for _, ev := range all[len(post):] {
		if !coalesced(ev) {
			want = append(want, ev.Event+"#"+ev.ID)
		}
	}
	again := through(t, resumed, "tick")
	for _, ev := range again {
		if !coalesced(ev) {
			got = append(got, ev.Event+"#"+ev.ID)
		}
	}
	assert.Equal(t, want, got)
	assert.Equal(t, latestStates(t, all), latestStates(t, again))

	// Logging out closes the session's streams.
	alicec := e.remoteClient(base)
	_, page := alicec.get("/logout?tid=" + aliceTID)
	resp, _ = alicec.post("/logout?tid="+aliceTID, url.Values{"csrf": {csrf(t, page)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	for _, st := range []*testkit.EventStream{s, resumed} {
		select {
		case err := <-st.Done:
			assert.True(t, errors.Is(err, io.EOF), "the server ended the stream: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("stream still open after logout")
		}
	}
	resp, err = http.Get(events)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "a logged-out tid opens no stream, and EventSource stops")
}

func TestLiveHeartbeatAndExpiry(t *testing.T) {
	// Ensure an idle stream gets a heartbeat comment every LiveHeartbeat,
	// and a stream whose session expired is closed at the next check.
	e := newEnv(t)
	_, tid := e.player("scully", game.FBI)
	base := serveLoop(t, e)
	s := openStream(t, base+"/game/events?tid="+tid, "", true)
	require.Equal(t, "hello", s.Next(t).Event)

	e.clock.Add(handlers.LiveHeartbeat)
	assert.Equal(t, ":", s.Next(t).Event, "a heartbeat")

	e.clock.Add(game.DefaultSessionTTL)
	select {
	case err := <-s.Done:
		assert.ErrorIs(t, err, io.EOF)
	case <-time.After(5 * time.Second):
		t.Fatal("the expired session's stream is still open")
	}
}

func TestLiveFactionChannel(t *testing.T) {
	// Ensure a post on the faction-only channel reaches only that faction's
	// streams, live and on resume.
	e := newEnv(t)
	_, aliceTID := e.player("alice", game.FBI)
	_, mibTID := e.player("krycek", game.MIB)
	_, fbiTID := e.player("doggett", game.FBI)
	base := serveLoop(t, e)
	alice := openStream(t, base+"/game/events?tid="+aliceTID, "")
	mib := openStream(t, base+"/game/events?tid="+mibTID, "")
	hello := alice.Next(t)
	require.Equal(t, "hello", mib.Next(t).Event)

	for _, p := range []struct{ tid, body, channel string }{
		{mibTID, "MIB eyes only", "faction"}, {fbiTID, "for everyone", "public"},
	} {
		resp, body := e.remoteClient(base).act("/game?function=board&tid="+p.tid,
			url.Values{"function": {"post"}, "body": {p.body}, "channel": {p.channel}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	}
	postBody := func(evs []testkit.Event) string {
		var p struct{ Body string }
		require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-1].Data), &p))
		return p.Body
	}
	assert.Equal(t, "MIB eyes only", postBody(mib.Until(t, "post")))
	assert.Equal(t, "for everyone", postBody(mib.Until(t, "post")))
	assert.Equal(t, "for everyone", postBody(alice.Until(t, "post")), "the MIB's post never reached the FBI")

	resumed := openStream(t, base+"/game/events?tid="+aliceTID, hello.ID)
	require.Equal(t, "hello", resumed.Next(t).Event)
	assert.Equal(t, "for everyone", postBody(resumed.Until(t, "post")), "nor on resume")
}

func TestLivePollSeesOtherWriters(t *testing.T) {
	// Ensure a write by another connection to the database (another
	// process's store) shows in this server's cached pages after a poll.
	e := newEnv(t)
	_, tid := e.player("walter", game.FBI)
	c := e.client()
	_, page := c.get("/game?function=ranking&tid=" + tid)
	require.NotContains(t, page, "gibson")

	other, err := game.Open(e.path, game.Options{BcryptCost: bcrypt.MinCost, Now: e.clock.Now})
	require.NoError(t, err)
	_, err = other.Register(t.Context(), "gibson", "password-gibson", game.MIB)
	require.NoError(t, err)
	require.NoError(t, other.Close())

	e.srv.PollLive(t.Context())
	_, page = c.get("/game?function=ranking&tid=" + tid)
	assert.Contains(t, page, "gibson", "the other writer's player, after one poll")
}

func TestLiveResumeBounded(t *testing.T) {
	// Ensure a stream that resumes after missing more than the catch-up
	// allows is told to reset (its page reloads) instead of being sent a
	// backlog that would cut it off before it saw anything, and that one
	// session holds at most LiveStreamsPerSession streams.
	e := newEnv(t)
	_, tid := e.player("alice", game.FBI)
	base := serveLoop(t, e)
	events := base + "/game/events?tid=" + tid
	first := openStream(t, events, "")
	hello := first.Next(t)
	// More than the catch-up's 200 changes: 105 agents enlist (news) and post.
	for i := range 105 {
		p, err := e.store.Register(t.Context(), fmt.Sprintf("agent%03d", i), "password-x", game.MIB)
		require.NoError(t, err)
		_, err = e.store.Act(t.Context(), p.ID, game.Action{Kind: game.PostMessage, Body: "hello"})
		require.NoError(t, err)
	}
	for n := 0; n < 210; {
		if ev := first.Next(t); ev.Event == "post" || ev.Event == "news" {
			n++
		}
	}

	resumed := openStream(t, events, hello.ID)
	require.Equal(t, "hello", resumed.Next(t).Event)
	assert.Equal(t, "reset", resumed.Next(t).Event, "too much missed: reload")

	for range handlers.LiveStreamsPerSession {
		st := openStream(t, events, "")
		require.Equal(t, "hello", st.Next(t).Event)
	}
	for _, st := range []*testkit.EventStream{first, resumed} {
		select {
		case err := <-st.Done:
			assert.ErrorIs(t, err, io.EOF, "the oldest streams of the session were closed")
		case <-time.After(5 * time.Second):
			t.Fatal("a session holds more than LiveStreamsPerSession streams")
		}
	}
}

func TestLiveView(t *testing.T) {
	// Ensure a stream gets the standings (player events) only when its
	// page (view=) shows them, the sources' only on the sources page, and
	// everything when it names no page; live and on resume.
	e := newEnv(t)
	_, aliceTID := e.player("alice", game.FBI)
	_, bobTID := e.player("bob", game.MIB)
	base := serveLoop(t, e)
	views := []string{"hq", "ranking", "dossiers", "sources", ""}
	streams := map[string]*testkit.EventStream{}
	var hello testkit.Event
	for _, v := range views {
		streams[v] = openStream(t, base+"/game/events?tid="+aliceTID+"&view="+v, "")
		hello = streams[v].Next(t)
		require.Equal(t, "hello", hello.Event)
	}

	src := cheapest(t, e)
	bob := e.remoteClient(base)
	resp, body := bob.act("/game?function=sources&tid="+bobTID, url.Values{"function": {"haggle"},
		"source": {strconv.FormatInt(src.ID, 10)}, "offer": {strconv.Itoa(src.Price)}, "price": {strconv.Itoa(src.Price)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	resp, body = bob.act("/game?function=board&tid="+bobTID, url.Values{"function": {"post"}, "body": {"marker"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)

	kinds := func(evs []testkit.Event) []string {
		var ks []string
		for _, ev := range evs {
			if !slices.Contains(ks, ev.Event) {
				ks = append(ks, ev.Event)
			}
		}
		slices.Sort(ks)
		return ks
	}
	want := map[string][]string{"hq": {"news", "post"}, "ranking": {"news", "player", "post"}, "dossiers": {"news", "player", "post"},
		"sources": {"news", "post", "source"}, "": {"news", "player", "post", "source"}}
	for _, v := range views {
		assert.Equal(t, want[v], kinds(through(t, streams[v], "post")), "view=%s", v)
		resumed := openStream(t, base+"/game/events?tid="+aliceTID+"&view="+v, hello.ID)
		require.Equal(t, "hello", resumed.Next(t).Event)
		assert.Equal(t, want[v], kinds(through(t, resumed, "post")), "view=%s, resumed", v)
	}
}
