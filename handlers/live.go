package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// Live pages: GET /game/events is an event stream (server-sent events) of
// the changes the game logs in its store (game.Change): the viewer's feed,
// the news, the board, each tick with the viewer's figures, and sources.
// The hub below reads what is new from the store by cursor and fans it
// out to the open streams. Because it reads the store, not memory, a
// second process serving the same database feeds its own streams the
// same way, and a browser that reconnects with Last-Event-ID resumes
// after the last change it saw, with nothing lost or doubled.

// Live-stream timing.
const (
	// LivePollInterval is how often PollLive should be called to pick up
	// changes made by other processes (and ticks): cmd/gameserver calls
	// it on the loop at this period. Actions handled here are fanned out
	// at once.
	LivePollInterval = 100 * time.Millisecond
	// LiveHeartbeat is how often an idle stream gets a comment line, so
	// that proxies and browsers keep it open (the usual 15 to 30 s), and
	// how often each stream's session is checked: a stream whose session
	// ended (logout anywhere, expiry) is closed.
	LiveHeartbeat = 20 * time.Second
	// liveBatch is how many changes one store read takes.
	liveBatch = 256
	// liveCatchUp bounds what a resuming stream is sent of what it missed:
	// at most liveCatchUpChanges changes and liveCatchUpBytes bytes (a
	// quarter of the engine's default StreamBuffer, which would cut the
	// stream off before the browser saw any of it). Past either the
	// stream gets "reset" and the page reloads, which costs one page view
	// instead of a long catch-up on the loop.
	liveCatchUpChanges = 200
	liveCatchUpBytes   = 64 << 10
	// LiveStreamsPerSession is how many streams one session may hold open
	// (a player's tabs); opening one more closes the oldest.
	LiveStreamsPerSession = 8
)

// PollLive picks up what other processes wrote to the store (Store.Sync,
// so cached pages are at most one poll stale), delivers the changes logged
// since the last call to the open streams, and every LiveHeartbeat sends
// the heartbeat and closes streams whose session has ended. Call it where
// the handlers run, one at a time with them: on the loop under the
// gameserver (cmd/gameserver runs it every LivePollInterval with Every),
// under the SerialHandler's lock under net/http (its Every).
func (s *Server) PollLive(ctx context.Context) {
	if err := s.store.Sync(ctx); err != nil {
		s.log.Error("live: sync", "err", err)
	}
	s.live.tick(ctx)
}

// pollLive delivers at once what a handler's own write logged.
func (s *Server) pollLive(ctx context.Context) { s.live.poll(ctx) }

// endLiveSession closes the streams of session sid at once (logout).
func (s *Server) endLiveSession(sid string) { s.live.endSession(sid) }

// lastEventID reads the Last-Event-ID header a reconnecting EventSource
// sends (WHATWG HTML section 9.2.4), or else the lastEventId query
// parameter; 0 if absent or not a change id.
func lastEventID(r *http.Request) int64 {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// handleEvents serves GET /game/events, the viewer's live stream
// (gameserver.Stream: written from the loop under the gameserver, held by
// this handler under net/http). It begins with a hello carrying the
// current cursor, then, for a browser resuming with Last-Event-ID, what it
// missed; then what happens.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, v *viewer) error {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	lastID := lastEventID(r)
	return gameserver.Stream(w, r, func(stream *gameserver.EventStream) {
		s.live.open(r.Context(), v, stream, lastID)
	})
}
