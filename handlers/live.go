package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statesecrets/server/game"
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

// liveClient is one open stream.
type liveClient struct {
	player  int64
	faction game.Faction
	sid     string
	opened  uint64 // the hub's count of streams opened when this one was
	stream  *gameserver.EventStream
}

// send queues msg on cl's stream; false once the stream has ended (its
// client went away, or it fell StreamBuffer behind).
func (cl *liveClient) send(msg []byte) bool {
	_, err := cl.stream.Write(msg)
	return err == nil
}

// liveHub fans the store's changes out to open streams. Its methods run
// on the loop under the gameserver (as EventStream's must); mu serves
// net/http, where handlers run concurrently.
type liveHub struct {
	mu        sync.Mutex
	cursor    int64  // every change up to here was delivered
	opened    uint64 // streams opened so far
	clients   map[*liveClient]struct{}
	lastCheck time.Time // of sessions, and the last heartbeat
}

func newLiveHub() *liveHub { return &liveHub{clients: map[*liveClient]struct{}{}} }

// PollLive picks up what other processes wrote to the store (Store.Sync,
// so cached pages are at most one poll stale), delivers the changes logged
// since the last call to the open streams, and every LiveHeartbeat sends
// the heartbeat and closes streams whose session has ended. Under the
// gameserver call it on the loop (cmd/gameserver runs it every
// LivePollInterval); it is safe to call concurrently with the handlers
// otherwise.
func (s *Server) PollLive(ctx context.Context) {
	if err := s.store.Sync(ctx); err != nil {
		s.log.Error("live: sync", "err", err)
	}
	h := s.live
	h.mu.Lock()
	defer h.mu.Unlock()
	s.pollLocked(ctx)
	if now := s.now(); now.Sub(h.lastCheck) >= LiveHeartbeat {
		h.lastCheck = now
		s.heartbeatLocked(ctx)
	}
}

// pollLocked reads and delivers the changes after the hub's cursor.
func (s *Server) pollLocked(ctx context.Context) {
	h := s.live
	if len(h.clients) == 0 {
		// Nobody listens: just move the cursor on (one cheap query).
		if last, err := s.store.LastChange(ctx); err == nil {
			h.cursor = last
		}
		return
	}
	for {
		changes, missed, err := s.store.ChangesSince(ctx, h.cursor, liveBatch)
		if err != nil {
			s.log.Error("live: read changes", "err", err)
			return
		}
		if missed {
			s.broadcastLocked(liveReset, nil)
		}
		s.deliverLocked(ctx, changes)
		if len(changes) < liveBatch {
			return
		}
	}
}

// deliverLocked sends each change to the streams it concerns: a feed line
// to its player's streams, the rest to all; a feed line or a tick carries
// each recipient's own figures, read once per player.
func (s *Server) deliverLocked(ctx context.Context, changes []game.Change) {
	h := s.live
	for i := range changes {
		c := &changes[i]
		h.cursor = c.ID
		if c.Gone {
			continue
		}
		switch c.Kind {
		case game.ChangeFeed, game.ChangeTick:
			figures := map[int64]*game.Player{}
			for cl := range h.clients {
				if !cl.reads(c) {
					continue
				}
				p, ok := figures[cl.player]
				if !ok {
					p, _ = s.store.Player(ctx, cl.player) // nil (no figures) if it failed
					figures[cl.player] = p
				}
				s.sendLocked(cl, liveMessage(c, p))
			}
		default:
			s.broadcastLocked(liveMessage(c, nil), func(cl *liveClient) bool { return cl.reads(c) })
		}
	}
}

// reads reports whether cl's player may see change c: a feed line only
// its own player, a post on the faction-only channel only its faction.
func (cl *liveClient) reads(c *game.Change) bool {
	switch {
	case c.PlayerID != 0:
		return c.PlayerID == cl.player
	case c.Kind == game.ChangePost && c.Post.FactionOnly:
		return c.Post.Faction == cl.faction
	}
	return true
}

// broadcastLocked sends the same bytes to every stream whose client to
// selects (nil: all): one copy of the message for all of them
// (gameserver.Broadcast).
func (s *Server) broadcastLocked(msg []byte, to func(*liveClient) bool) {
	h := s.live
	streams := make([]*gameserver.EventStream, 0, len(h.clients))
	for cl := range h.clients {
		if to == nil || to(cl) {
			streams = append(streams, cl.stream)
		}
	}
	gameserver.Broadcast(streams, msg)
	for cl := range h.clients {
		if cl.stream.Closed() {
			delete(h.clients, cl)
		}
	}
}

func (s *Server) sendLocked(cl *liveClient, msg []byte) {
	if !cl.send(msg) {
		delete(s.live.clients, cl)
	}
}

// heartbeatLocked sends the heartbeat and closes the streams whose session
// is gone.
func (s *Server) heartbeatLocked(ctx context.Context) {
	for cl := range s.live.clients {
		if p, err := s.store.SessionPlayer(ctx, cl.sid); err != nil || p.ID != cl.player {
			s.dropLocked(cl)
			continue
		}
		s.sendLocked(cl, liveHeartbeat)
	}
}

func (s *Server) dropLocked(cl *liveClient) {
	delete(s.live.clients, cl)
	cl.stream.Close()
}

// endLiveSession closes the streams of session sid at once (logout).
func (s *Server) endLiveSession(sid string) {
	h := s.live
	h.mu.Lock()
	defer h.mu.Unlock()
	for cl := range h.clients {
		if cl.sid == sid {
			s.dropLocked(cl)
		}
	}
}

// pollLive delivers at once what a handler's own write logged.
func (s *Server) pollLive(ctx context.Context) {
	h := s.live
	h.mu.Lock()
	defer h.mu.Unlock()
	s.pollLocked(ctx)
}

// openLive registers a new stream for the viewer and sends it the hello
// and, when it resumes (lastID > 0), what it missed since lastID. A stream
// leaves the hub when a send to it fails or it is dropped.
func (s *Server) openLive(ctx context.Context, v *viewer, stream *gameserver.EventStream, lastID int64) {
	h := s.live
	h.mu.Lock()
	defer h.mu.Unlock()
	s.pollLocked(ctx) // bring the cursor up to date first
	h.opened++
	cl := &liveClient{player: v.player.ID, faction: v.player.Faction, sid: v.sid, stream: stream, opened: h.opened}
	s.limitSessionLocked(v.sid)
	if !cl.send(liveHello(h.cursor)) {
		return
	}
	if lastID > 0 && lastID < h.cursor {
		if !s.catchUpLocked(ctx, cl, lastID) {
			return
		}
	}
	h.clients[cl] = struct{}{}
}

// limitSessionLocked closes the oldest streams of session sid while it
// holds LiveStreamsPerSession or more, making room for one more.
func (s *Server) limitSessionLocked(sid string) {
	for {
		var n int
		var oldest *liveClient
		for cl := range s.live.clients {
			if cl.sid == sid {
				n++
				if oldest == nil || cl.opened < oldest.opened {
					oldest = cl
				}
			}
		}
		if n < LiveStreamsPerSession {
			return
		}
		s.dropLocked(oldest)
	}
}

// catchUpLocked sends cl the changes for it after lastID up to the hub's
// cursor, or reset if some were pruned already or they are more than
// liveCatchUpChanges or liveCatchUpBytes.
func (s *Server) catchUpLocked(ctx context.Context, cl *liveClient, lastID int64) bool {
	h := s.live
	changes, missed, err := s.store.ChangesFor(ctx, cl.player, lastID, liveCatchUpChanges+1)
	if err != nil || missed || len(changes) > liveCatchUpChanges && changes[liveCatchUpChanges].ID <= h.cursor {
		return cl.send(liveReset)
	}
	var me *game.Player
	sent := 0
	for i := range changes {
		c := &changes[i]
		if c.ID > h.cursor {
			break // the next poll delivers it
		}
		if c.Gone || !cl.reads(c) {
			continue
		}
		if me == nil && (c.Kind == game.ChangeFeed || c.Kind == game.ChangeTick) {
			me, _ = s.store.Player(ctx, cl.player)
		}
		msg := liveMessage(c, me)
		if sent += len(msg); sent > liveCatchUpBytes {
			return cl.send(liveReset)
		}
		if !cl.send(msg) {
			return false
		}
	}
	return true
}

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
		s.openLive(r.Context(), v, stream, lastID)
	})
}
