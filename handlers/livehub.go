package handlers

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// liveHub fans the store's changes out to the open event streams: it owns
// the streams, the cursor, the heartbeat and the limits on opening
// streams, and nothing outside this file reaches into them.
//
// It has no lock, because nothing contends: its methods must be called one
// at a time, which both engines already do. Under the gameserver every
// caller (the handlers, the PollLive timer) runs on the loop goroutine, as
// EventStream's methods must; under net/http (-engine nethttp) they run
// under gameserver.SerialHandler's one lock, which the handlers and the
// timers (Every) share.
//
// What each step costs the loop, whatever the number of streams: a run
// of changes goes out in shares of liveShareBudget of a turn each
// (livefan.go), the figures a tick or feed line carries read in one query
// per share (PlayersByID); a heartbeat turn checks the sessions of the
// streams due in one query (SessionOwners); opening a stream looks only
// at its own session's, player's and address's streams, and a resume
// reads what it missed in a few queries (ChangesFor), at most
// liveCatchUpChanges.
type liveHub struct {
	store *game.Store
	log   *slog.Logger
	now   func() time.Time

	cursor    int64  // every change up to here was delivered
	opened    uint64 // streams opened so far
	clients   map[*liveClient]struct{}
	bySession map[string][]*liveClient // oldest first; at most LiveStreamsPerSession each
	byPlayer  map[int64][]*liveClient  // oldest first; at most LiveStreamsPerPlayer each
	byAddr    map[string][]*liveClient // at most LiveStreamsPerAddress each

	// The heartbeat wheel: a stream's heartbeat and session check come
	// when the clock passes its slot, once every LiveHeartbeat; each
	// stream draws its slot at random, so they spread over the period.
	slots  [liveSlots][]*liveClient // forgotten clients are dropped at their slot's turn
	slotAt int64                    // the last slot number served (time / LivePollInterval)

	job *liveJob // the changes read and not yet sent to every stream, if any
	// soon runs a function one at a time with the handlers at the loop's
	// next turn (SetLiveSoon; nil: the next share of a job waits for the
	// next poll or DrainLive); soonPending says one is on its way.
	soon        func(func())
	soonPending bool
	// turn says how long the loop's turn in progress has run (SetLiveTurn;
	// nil: unknown, taken as none), so that a share takes what the turn's
	// earlier work left of liveShareBudget; put says the share about to
	// run was put off once to the next turn, as too little was left.
	turn func() time.Duration
	put  bool
	pace livePacer

	// The coalesced standings and sources (LiveStateInterval): the latest
	// change of each player's and source's read since the last flush, when
	// that was, and the cursor at each of the last liveStateMarks flushes.
	pending map[liveStateKey]game.Change
	stateAt time.Time
	flushes []liveFlush // the last liveStateKept, oldest first

	// polledAt is the store's Version when a poll last read the change log
	// to its end and sent all of it: until Version moves, no change is
	// newer than the cursor, and a stream's open needs no poll.
	polledAt uint64
	polled   bool // polledAt is set

	sessionOpens *limiter // opens per session, a token bucket each
	addrOpens    *limiter // opens per address
}

// liveSlots is the number of slots in the heartbeat wheel: one per poll.
const liveSlots = int(LiveHeartbeat / LivePollInterval)

// liveClient is one open stream.
type liveClient struct {
	player  int64
	faction game.Faction
	sid     string
	addr    string    // clientKey of the request that opened it
	opened  uint64    // the hub's count of streams opened when this one was
	endsAt  time.Time // its lifetime's end (LiveStreamLifetime, jittered)
	slot    int       // in the heartbeat wheel
	gone    bool      // forgotten by the hub
	shows   liveView  // what of the shared changes its page shows
	stream  *gameserver.EventStream
	// figures are the player's figures the stream was last sent with a
	// feed line or tick (sent: since it opened), so that a tick that
	// leaves them as they were is the same bytes as every other stream's.
	figures liveFigures
	sent    bool
}

func newLiveHub(store *game.Store, log *slog.Logger, now func() time.Time) *liveHub {
	return &liveHub{store: store, log: log, now: now, clients: map[*liveClient]struct{}{},
		bySession: map[string][]*liveClient{}, byPlayer: map[int64][]*liveClient{}, byAddr: map[string][]*liveClient{},
		pending:      map[liveStateKey]game.Change{},
		slotAt:       slotNumber(now()),
		sessionOpens: newLimiter(LiveOpenBurstSession, LiveOpenRefillSession, maxLiveOpeners),
		addrOpens:    newLimiter(LiveOpenBurstAddress, LiveOpenRefillAddress, maxLiveOpeners)}
}

func slotNumber(t time.Time) int64 { return t.UnixNano() / int64(LivePollInterval) }

// send queues msg on cl's stream; false once the stream has ended (its
// client went away, or it fell StreamBuffer behind).
func (cl *liveClient) send(msg []byte) bool {
	_, err := cl.stream.Write(msg)
	return err == nil
}

// reads reports whether cl's player may see change c and its page shows
// it: a feed line only its own player, a post on the faction-only channel
// only its faction, a standing and a source only the pages that show them
// (liveViewOf).
func (cl *liveClient) reads(c *game.Change) bool {
	switch {
	case c.PlayerID != 0:
		return c.PlayerID == cl.player
	case c.Kind == game.ChangePost && c.Post.FactionOnly:
		return c.Post.Faction == cl.faction
	case c.Kind == game.ChangePlayer:
		return cl.shows&showsStandings != 0
	case c.Kind == game.ChangeSource:
		return cl.shows&showsSources != 0
	}
	return true
}

// liveView is what of the changes every player may see a stream's page
// shows, beyond the feed, news, board posts and ticks that every page
// shows (the masthead's figures, the tabs' counts).
type liveView uint8

const (
	showsStandings liveView = 1 << iota // player events: the rows of the ranking and the dossiers
	showsSources                        // source events: the sources' rows and haggle forms
	showsAll       = showsStandings | showsSources
)

// liveViewOf is what the game page named page (its function, as live.js
// passes it in the stream's view parameter) shows. A page that shows no
// standing and no source does nothing with their events (live.js), so
// they are not sent to it: every order that moves a player's Secrets
// would otherwise cost a message to every open stream. An empty or
// unknown name (a client that does not say) gets them all.
func liveViewOf(page string) liveView {
	switch page {
	case "ranking", "dossiers":
		return showsStandings
	case "sources":
		return showsSources
	case "hq", "news", "board", "feed", "hall", "profile", "reports", "messages":
		return 0
	}
	return showsAll
}

// tick delivers what is new and serves the heartbeat slots the clock has
// passed since the last call, at most liveBeatCatchUp of them: after a
// clock jump or a stalled loop the wheel catches up over the next calls,
// because serving all its slots at once is one turn that checks the
// session of, and writes to, every open stream (10,000 streams: a 730 ms
// turn in BenchmarkLiveStreams, whose game clock jumps a tick at once).
func (h *liveHub) tick(ctx context.Context) {
	h.poll(ctx)
	if h.job == nil {
		h.flushState(ctx)
	}
	cur := slotNumber(h.now())
	h.slotAt = max(h.slotAt, cur-int64(liveSlots)) // a clock jump serves each slot once
	for n := 0; h.slotAt < cur && n < liveBeatCatchUp; n++ {
		h.beat(ctx, &h.slots[(h.slotAt+1)%int64(liveSlots)])
		h.slotAt++
	}
}

// liveBeatCatchUp is how many heartbeat slots one call of tick serves at
// most: one more than a call at LivePollInterval needs, so a wheel left
// behind catches up by a slot a call.
const liveBeatCatchUp = 2

// poll delivers what is left of the last run of changes, unless the
// loop's next turn does, then reads the changes after the hub's cursor:
// it keeps the standings and sources for the next state flush (hold) and
// starts delivering the rest, one share now, the others at the next
// turns (drain).
func (h *liveHub) poll(ctx context.Context) {
	version := h.store.Version() // before the reads: a write after them moves it on
	if h.job != nil && (h.soonPending || !h.drain(ctx)) {
		return
	}
	if len(h.clients) == 0 {
		// Nobody listens: just move the cursor on (one cheap query).
		if last, err := h.store.LastChange(ctx); err == nil {
			h.cursor = last
			h.polledAt, h.polled = version, true
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
		if len(changes) > 0 {
			after := h.cursor
			h.cursor = changes[len(changes)-1].ID
			if now := h.hold(changes); len(now) > 0 && !h.start(ctx, now, after, false) {
				return // the next turns send the rest
			}
		}
		if len(changes) < liveBatch {
			if h.job == nil {
				h.polledAt, h.polled = version, true
			}
			return
		}
	}
}

// pollIfMoved polls unless nothing was written since the last poll read
// the change log to its end and sent it all: most streams open while no
// write happened since the last, and then cost no query.
func (h *liveHub) pollIfMoved(ctx context.Context) {
	if h.job != nil || !h.polled || h.store.Version() != h.polledAt {
		h.poll(ctx)
	}
}

// drainJob sends the next share of a run of changes still going out,
// unless the loop's next turn will (soon); with none it costs nothing.
func (h *liveHub) drainJob(ctx context.Context) {
	if h.job != nil && !h.soonPending {
		h.drain(ctx)
	}
}

// beat serves one heartbeat slot: it checks the sessions of its streams in
// one query, ends those whose session is gone (with a logout event) or
// whose lifetime is over (with a retry hint: the browser reconnects at
// once, quietly), and sends the others the heartbeat.
func (h *liveHub) beat(ctx context.Context, slot *[]*liveClient) {
	due := make([]*liveClient, 0, len(*slot))
	var sids []string
	for _, cl := range *slot {
		switch {
		case cl.gone:
		case cl.stream.Closed():
			h.forget(cl)
		default:
			due = append(due, cl)
			sids = append(sids, cl.sid)
		}
	}
	*slot = (*slot)[:0]
	if len(due) == 0 {
		return
	}
	owners, err := h.store.SessionOwners(ctx, sids)
	if err != nil {
		h.log.Error("live: check sessions", "err", err) // keep them until the next check
	}
	now := h.now()
	beats := make([]*gameserver.EventStream, 0, len(due))
	for _, cl := range due {
		switch owner, ok := owners[cl.sid]; {
		case err == nil && (!ok || owner != cl.player):
			h.end(cl, liveLogout)
		case !now.Before(cl.endsAt):
			h.end(cl, liveRenew(rand.IntN(liveRenewSpread)))
		default:
			beats = append(beats, cl.stream)
			*slot = append(*slot, cl)
		}
	}
	gameserver.Broadcast(beats, liveHeartbeat)
}

// add registers cl with the hub.
func (h *liveHub) add(cl *liveClient) {
	h.clients[cl] = struct{}{}
	h.bySession[cl.sid] = append(h.bySession[cl.sid], cl)
	h.byPlayer[cl.player] = append(h.byPlayer[cl.player], cl)
	h.byAddr[cl.addr] = append(h.byAddr[cl.addr], cl)
	h.slots[cl.slot] = append(h.slots[cl.slot], cl)
}

// forget removes cl from the hub (its heartbeat slot drops it at its turn).
func (h *liveHub) forget(cl *liveClient) {
	if cl.gone {
		return
	}
	cl.gone = true
	delete(h.clients, cl)
	remove(h.bySession, cl.sid, cl)
	remove(h.byPlayer, cl.player, cl)
	remove(h.byAddr, cl.addr, cl)
}

// remove deletes cl from m[k], and m[k] once it is empty.
func remove[K comparable](m map[K][]*liveClient, k K, cl *liveClient) {
	cls := slices.DeleteFunc(m[k], func(o *liveClient) bool { return o == cl })
	if len(cls) == 0 {
		delete(m, k)
	} else {
		m[k] = cls
	}
}

// end sends cl its last message, closes its stream and forgets it.
func (h *liveHub) end(cl *liveClient, last []byte) {
	cl.send(last)
	cl.stream.Close()
	h.forget(cl)
}

// endSession closes the streams of session sid at once (logout), telling
// each page why.
func (h *liveHub) endSession(sid string) {
	for _, cl := range slices.Clone(h.bySession[sid]) {
		h.end(cl, liveLogout)
	}
}

// admitAddress is the first check of an open, made before the session is
// looked up, so that a storm of opens from one address costs the loop its
// token bucket and no query: it returns 0 to go on, else how long the
// client should wait (the address opened streams faster than
// LiveOpenBurstAddress and LiveOpenRefillAddress allow, or it holds
// LiveStreamsPerAddress streams: then stop is "address", liveStop's reason).
func (h *liveHub) admitAddress(addr string) (wait time.Duration, stop string) {
	h.prune(h.byAddr, addr)
	if len(h.byAddr[addr]) >= LiveStreamsPerAddress {
		return liveFullWait, "address"
	}
	return h.addrOpens.allow(addr, h.now()), ""
}

// admit decides, after admitAddress let the open through, whether the
// viewer's session may open a stream: 0 to open it, else how long to wait
// (the session opened streams faster than its token bucket allows).
func (h *liveHub) admit(v *viewer) time.Duration {
	return h.sessionOpens.allow(v.sid, h.now())
}

// prune forgets the ended streams of m[k].
func (h *liveHub) prune(m map[string][]*liveClient, k string) {
	for _, cl := range slices.Clone(m[k]) {
		if cl.stream.Closed() {
			h.forget(cl)
		}
	}
}

// open registers a new stream for the viewer, which admit let in, and
// sends it the hello and, when it resumes (lastID > 0), what it missed
// since lastID. A stream leaves the hub when a send to it fails or it is
// ended.
//
// A fresh stream's hello carries the cursor as its id, so that a browser
// that reconnects before any change resumes from there. A resuming
// stream's hello carries no id: what it missed comes first, each change
// with its own id, and then an id-only message moves the browser's
// Last-Event-ID to the cursor; a connection lost on the way resumes from
// the last change it got, never past the ones it did not.
func (h *liveHub) open(ctx context.Context, v *viewer, addr string, stream *gameserver.EventStream, lastID int64, shows liveView) {
	h.pollIfMoved(ctx) // bring the cursor up to date first
	h.opened++
	cl := &liveClient{player: v.player.ID, faction: v.player.Faction, sid: v.sid, addr: addr, stream: stream,
		opened: h.opened, slot: rand.IntN(liveSlots), shows: shows,
		endsAt: h.now().Add(LiveStreamLifetime - time.Duration(rand.Int64N(int64(LiveStreamLifetime/10))))}
	h.makeRoom(h.bySession[v.sid], LiveStreamsPerSession)
	h.makeRoom(h.byPlayer[v.player.ID], LiveStreamsPerPlayer)
	switch {
	case (lastID <= 0 || lastID >= h.cursor) && h.job != nil:
		// Hello at the cursor before the job's changes, then those changes.
		if !cl.send(liveHello(h.job.after)) || !h.sendJob(ctx, cl) || !cl.send(liveID(h.cursor)) {
			return
		}
	case lastID <= 0 || lastID >= h.cursor:
		if !cl.send(liveHello(h.cursor)) {
			return
		}
	case !cl.send(liveHelloResume) || !h.catchUp(ctx, cl, lastID) || !cl.send(liveID(h.cursor)):
		return
	}
	h.add(cl)
}

// makeRoom stops the oldest of cls (a session's or a player's streams)
// while they are max or more, making room for one more: the page of each
// gets a stop event, so it does not reconnect and close another (the tab
// the player opened last is the one they look at).
func (h *liveHub) makeRoom(cls []*liveClient, max int) {
	open := make([]*liveClient, 0, len(cls))
	for _, cl := range slices.Clone(cls) { // forget compacts the hub's slice, which cls may be
		if cl.stream.Closed() {
			h.forget(cl)
		} else {
			open = append(open, cl)
		}
	}
	for len(open) >= max {
		h.end(open[0], liveStop("tabs"))
		open = open[1:]
	}
}

// catchUp sends cl the changes for it after lastID up to the hub's cursor,
// and first the coalesced ones it may have missed before (missedState), or
// reset if some were pruned already or they are more than
// liveCatchUpChanges or liveCatchUpBytes; false if the stream ended.
func (h *liveHub) catchUp(ctx context.Context, cl *liveClient, lastID int64) bool {
	changes, missed, err := h.store.ChangesFor(ctx, cl.player, lastID, liveCatchUpChanges+1)
	if err != nil || missed || len(changes) > liveCatchUpChanges && changes[liveCatchUpChanges].ID <= h.cursor {
		return cl.send(liveReset)
	}
	sent := 0
	for _, c := range h.missedState(lastID) {
		if cl.reads(&c) {
			msg := liveStateMessage(&c)
			sent += len(msg)
			if !cl.send(msg) {
				return false
			}
		}
	}
	var me *game.Player
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
