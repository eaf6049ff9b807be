package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
	// LiveHeartbeat is how often a stream gets a comment line, so that
	// proxies and browsers keep it open (the usual 15 to 30 s), and how
	// often each stream's session is checked: a stream whose session
	// ended (logout anywhere, expiry) gets a logout event and is closed.
	// Each stream has its own phase, one of LiveHeartbeat/LivePollInterval
	// slots drawn at random, and each poll checks the sessions of the
	// streams of its slot in one query.
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
	// (a player's tabs); opening one more stops the oldest (its page gets
	// a stop event, says so and does not reconnect).
	LiveStreamsPerSession = 8
	// LiveStreamsPerPlayer is the same across all of a player's sessions
	// (their phone and their laptop).
	LiveStreamsPerPlayer = 16
	// LiveStreamsPerAddress is how many streams one client address
	// (clientKey: the IPv4 address or IPv6 /64, X-Forwarded-For's with
	// Options.TrustProxy) may hold open, so that streams cannot fill the
	// connection cap. Past it a new stream is refused (its page stops
	// reconnecting and says why); the address's open streams are kept.
	LiveStreamsPerAddress = 64
	// LiveStreamLifetime is how long a stream stays open, less up to a
	// tenth at random so that streams opened together do not end together:
	// then it ends with a retry hint, and the browser reconnects within
	// liveRenewSpread and resumes, without a notice. A stream held open
	// forever by a client that left would hold its connection forever.
	LiveStreamLifetime = time.Hour

	// Opening a stream costs the loop a session lookup, a poll and, for a
	// resume, a catch-up; each session and each address may open
	// LiveOpenBurst* streams at once, then one more per LiveOpenRefill*
	// (token buckets, as for logins). An open over the limit is answered
	// at once: to an EventSource (Accept: text/event-stream) a 200 whose
	// body is only the retry field, the wait in milliseconds, after which
	// the browser reconnects; to other clients 429 Too Many Requests with
	// Retry-After.
	LiveOpenBurstSession  = 10
	LiveOpenRefillSession = time.Second
	LiveOpenBurstAddress  = 60
	LiveOpenRefillAddress = 100 * time.Millisecond

	// maxLiveOpeners bounds the buckets each open limiter remembers.
	maxLiveOpeners = 10_000
	// liveFullWait is the Retry-After of an address at its stream cap.
	liveFullWait = time.Minute
	// liveRenewSpread bounds the retry, in milliseconds, of a stream that
	// ends at its lifetime.
	liveRenewSpread = 5000
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

// SetLiveSoon gives the live hub the way to go on with a run of changes
// at once: soon(f) must run f once, one at a time with the handlers, as
// soon as it can: at the loop's next turn (gameserver.Server.Post), under
// net/http after the SerialHandler's lock is free (its AfterFunc with 0).
// A run for more streams than one turn writes (a tick to thousands of
// them) then goes out a share a turn (livefan.go), each share about 4 ms
// of the turn, as fast as the loop allows. Without it (nil, the default)
// the next share waits for the next PollLive or DrainLive. Call it before
// serving, or one at a time with the handlers.
func (s *Server) SetLiveSoon(soon func(f func())) { s.live.soon = soon }

// SetLiveTurn gives the live hub the way to know how long the loop's turn
// in progress has run (gameserver.Server.TurnElapsed), so that a share of
// a run of changes takes what the turn's earlier work (a poll's read, a
// tick's step, requests) left of the share's 4 ms, and goes at the next
// turn when little is left; under net/http, which has no turns, leave it
// nil (the default). Call it before serving, or one at a time with the
// handlers.
func (s *Server) SetLiveTurn(elapsed func() time.Duration) { s.live.turn = elapsed }

// DrainLive sends the next share of a run of changes that PollLive or an
// action began delivering and that is still going out to the open streams
// (a tick to thousands of them), unless the loop's next turn sends it
// (SetLiveSoon); otherwise it does nothing and reads nothing. Call it as
// PollLive is called, one at a time with the handlers, where SetLiveSoon
// has no way to offer.
func (s *Server) DrainLive(ctx context.Context) { s.live.drainJob(ctx) }

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
// this handler under net/http). It begins with a hello, then, for a
// browser resuming with Last-Event-ID, what it missed; then what happens
// (see liveHub.open), less what the page named by the view parameter (a
// /game function: live.js sends its page's) does not show (liveViewOf).
// A request without a valid session is answered 204 No Content, which
// tells an EventSource to stop reconnecting; one over the open limits is
// refused (see LiveOpenBurstSession, LiveStreamsPerAddress).
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	addr := clientKey(r, s.trustProxy)
	if wait, stop := s.live.admitAddress(addr); wait > 0 {
		if err := refuseStream(w, r, wait, stop); err != nil {
			s.Error(w, r, err)
		}
		return
	}
	v, err := s.findViewer(r)
	if game.ErrorCode(err) == game.EUNAUTHORIZED {
		w.WriteHeader(http.StatusNoContent)
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), viewerKey{}, v))
	if wait := s.live.admit(v); wait > 0 {
		if err := refuseStream(w, r, wait, ""); err != nil {
			s.Error(w, r, err)
		}
		return
	}
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	lastID := lastEventID(r)
	err = gameserver.Stream(w, r, func(stream *gameserver.EventStream) {
		s.live.open(storeContext(r), v, addr, stream, lastID, liveViewOf(r.URL.Query().Get("view")))
	})
	if errors.Is(err, gameserver.ErrTooManyStreams) {
		// The server holds all the streams it can (gameserver.Config.MaxStreams):
		// ask the client back later and free the connection, so that refused
		// streams kept alive cannot fill the connection cap in their turn.
		w.Header().Set("Connection", "close")
		err = refuseFull(w, r, LiveFullRetry)
	}
	if err != nil {
		s.Error(w, r, err)
	}
}

// LiveFullRetry is how long a stream refused because the server holds all
// the streams it can (gameserver.ErrTooManyStreams) is asked to wait
// before it opens again.
const LiveFullRetry = 30 * time.Second

// refuseFull answers a stream refused for the server's stream cap: 503
// Service Unavailable with Retry-After (RFC 9110 section 15.6.4), or, for
// an EventSource (which gives up for good on any status but 200), a 200
// stream that ends at once with wait as its retry field.
func refuseFull(w http.ResponseWriter, r *http.Request, wait time.Duration) error {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return &statusError{http.StatusServiceUnavailable, fmt.Sprintf(
			"The server holds all the live streams it can: wait %d s and try again.", secs)}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, err := w.Write(liveRetry(wait.Milliseconds()))
	return err
}

// refuseStream answers an open that admit refused: wait is how long to
// wait, stop (if not empty) why the page should stop reconnecting. An
// EventSource gets a 200 event stream that ends at once, with the wait as
// its retry field and the stop event if any, because it gives up for good
// on any other status; another client gets 429 with Retry-After.
func refuseStream(w http.ResponseWriter, r *http.Request, wait time.Duration, stop string) error {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return &statusError{http.StatusTooManyRequests, fmt.Sprintf(
			"Too many live streams from your session or address: wait %d s and try again.", secs)}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	body := liveRetry(wait.Milliseconds())
	if stop != "" {
		body = append(body, liveStop(stop)...)
	}
	_, err := w.Write(body)
	return err
}
