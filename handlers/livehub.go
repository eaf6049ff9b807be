package handlers

import (
	"context"
	"log/slog"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// liveHub fans the store's changes out to the open event streams: it owns
// the streams, the cursor and the heartbeat, and nothing outside this file
// reaches into them.
//
// It has no lock, because nothing contends: its methods must be called one
// at a time, which both engines already do. Under the gameserver every
// caller (the handlers, the PollLive timer) runs on the loop goroutine, as
// EventStream's methods must; under net/http (-engine nethttp) they run
// under gameserver.SerialHandler's one lock, which the handlers and the
// timers (Every) share.
type liveHub struct {
	store *game.Store
	log   *slog.Logger
	now   func() time.Time

	cursor    int64  // every change up to here was delivered
	opened    uint64 // streams opened so far
	clients   map[*liveClient]struct{}
	lastCheck time.Time // of sessions, and the last heartbeat
}

// liveClient is one open stream.
type liveClient struct {
	player  int64
	faction game.Faction
	sid     string
	opened  uint64 // the hub's count of streams opened when this one was
	stream  *gameserver.EventStream
}

func newLiveHub(store *game.Store, log *slog.Logger, now func() time.Time) *liveHub {
	return &liveHub{store: store, log: log, now: now, clients: map[*liveClient]struct{}{}}
}

// send queues msg on cl's stream; false once the stream has ended (its
// client went away, or it fell StreamBuffer behind).
func (cl *liveClient) send(msg []byte) bool {
	_, err := cl.stream.Write(msg)
	return err == nil
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

// tick delivers what is new and, every LiveHeartbeat, sends the heartbeat
// and closes the streams whose session has ended.
func (h *liveHub) tick(ctx context.Context) {
	h.poll(ctx)
	if now := h.now(); now.Sub(h.lastCheck) >= LiveHeartbeat {
		h.lastCheck = now
		h.heartbeat(ctx)
	}
}

// poll reads and delivers the changes after the hub's cursor.
func (h *liveHub) poll(ctx context.Context) {
	if len(h.clients) == 0 {
		// Nobody listens: just move the cursor on (one cheap query).
		if last, err := h.store.LastChange(ctx); err == nil {
			h.cursor = last
		}
		return
	}
	for {
		changes, missed, err := h.store.ChangesSince(ctx, h.cursor, liveBatch)
		if err != nil {
			h.log.Error("live: read changes", "err", err)
			return
		}
		if missed {
			h.broadcast(liveReset, nil)
		}
		h.deliver(ctx, changes)
		if len(changes) < liveBatch {
			return
		}
	}
}

// deliver sends each change to the streams it concerns: a feed line to its
// player's streams, the rest to all; a feed line or a tick carries each
// recipient's own figures, read once per player.
func (h *liveHub) deliver(ctx context.Context, changes []game.Change) {
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
					p, _ = h.store.Player(ctx, cl.player) // nil (no figures) if it failed
					figures[cl.player] = p
				}
				h.send(cl, liveMessage(c, p))
			}
		default:
			h.broadcast(liveMessage(c, nil), func(cl *liveClient) bool { return cl.reads(c) })
		}
	}
}

// broadcast sends the same bytes to every stream whose client to selects
// (nil: all): one copy of the message for all of them
// (gameserver.Broadcast).
func (h *liveHub) broadcast(msg []byte, to func(*liveClient) bool) {
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

// send queues msg on cl's stream, forgetting cl if the stream has ended.
func (h *liveHub) send(cl *liveClient, msg []byte) {
	if !cl.send(msg) {
		delete(h.clients, cl)
	}
}

// heartbeat sends the heartbeat and closes the streams whose session is
// gone.
func (h *liveHub) heartbeat(ctx context.Context) {
	for cl := range h.clients {
		if p, err := h.store.SessionPlayer(ctx, cl.sid); err != nil || p.ID != cl.player {
			h.drop(cl)
			continue
		}
		h.send(cl, liveHeartbeat)
	}
}

// drop closes cl's stream and forgets it.
func (h *liveHub) drop(cl *liveClient) {
	delete(h.clients, cl)
	cl.stream.Close()
}

// endSession closes the streams of session sid at once (logout).
func (h *liveHub) endSession(sid string) {
	for cl := range h.clients {
		if cl.sid == sid {
			h.drop(cl)
		}
	}
}

// open registers a new stream for the viewer and sends it the hello and,
// when it resumes (lastID > 0), what it missed since lastID. A stream
// leaves the hub when a send to it fails or it is dropped.
func (h *liveHub) open(ctx context.Context, v *viewer, stream *gameserver.EventStream, lastID int64) {
	h.poll(ctx) // bring the cursor up to date first
	h.opened++
	cl := &liveClient{player: v.player.ID, faction: v.player.Faction, sid: v.sid, stream: stream, opened: h.opened}
	h.limitSession(v.sid)
	if !cl.send(liveHello(h.cursor)) {
		return
	}
	if lastID > 0 && lastID < h.cursor {
		if !h.catchUp(ctx, cl, lastID) {
			return
		}
	}
	h.clients[cl] = struct{}{}
}

// limitSession closes the oldest streams of session sid while it holds
// LiveStreamsPerSession or more, making room for one more.
func (h *liveHub) limitSession(sid string) {
	for {
		var n int
		var oldest *liveClient
		for cl := range h.clients {
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
		h.drop(oldest)
	}
}

// catchUp sends cl the changes for it after lastID up to the hub's cursor,
// or reset if some were pruned already or they are more than
// liveCatchUpChanges or liveCatchUpBytes.
func (h *liveHub) catchUp(ctx context.Context, cl *liveClient, lastID int64) bool {
	changes, missed, err := h.store.ChangesFor(ctx, cl.player, lastID, liveCatchUpChanges+1)
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
			me, _ = h.store.Player(ctx, cl.player)
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
