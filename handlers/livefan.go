package handlers

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// The live hub's fan-out: how a run of changes read from the store reaches
// thousands of open streams without holding the loop.
//
// A run goes out in shares, each as many streams as fit in liveShareBudget
// of a loop turn (livePacer estimates what a stream costs, its socket
// write at the turn's end included), the next share on the loop's next
// turn (the hub's soon: gameserver.Server.Post), as Redis bounds the work
// of one turn of its event loop and goes on at the next. A loop with
// nothing else to do goes on at once, so a run reaches every stream about
// as fast as the loop can write them; a busy one serves its requests
// between the shares.
//
// Standings (player events) and sources' prices (source events) are the
// fan-out that grows with the players squared: each order that moves a
// player's Secrets is news to every stream whose page shows standings. So
// they are coalesced: the hub keeps the latest of each player's and each
// source's changes, and sends them at most once every LiveStateInterval,
// all in one share to each stream that shows them. What a player needs at
// once (a line of their feed, such as an attack on them or a message, the
// news, a post, a tick or a round's end) goes out at once.

// LiveStateInterval is how often the coalesced standings and sources go
// out at most (see above): a stream that shows them gets one write of
// them per interval however many orders changed them, each player's and
// each source's latest only. It is checked at each PollLive, so it is a
// multiple of LivePollInterval. 300 ms keeps an order's standing on the
// other players' pages well within a second (make capacity's delivery
// service level: p99 <= 1 s); a whole second, or a tick, would not.
const LiveStateInterval = 3 * LivePollInterval

const (
	// liveShareBudget is how much of a loop turn one share of a run may
	// take: the hub's work on its streams and, as livePacer estimates it,
	// their socket writes at the turn's end.
	liveShareBudget = 4 * time.Millisecond
	// liveShareLeast is the least of liveShareBudget a turn must have
	// left for a share (Server.SetLiveTurn): with less, the share goes at
	// the next turn, whole.
	liveShareLeast = liveShareBudget / 4
	// liveShareMin and liveShareMax bound a share, whatever the estimate
	// (liveShareLimit, for a test, too).
	liveShareMin = 16
	liveShareMax = 5000
	// livePaceWindow is how many recent shares the write cost is the
	// median of: a share whose turn also served requests, or waited for a
	// core, overstates it, and the least of them understated it by half
	// (BenchmarkLiveBroadcast: shares sized for 4 ms took 6 to 8).
	livePaceWindow = 8
	// liveFirstCost is a stream's hub work assumed before any share of a
	// run of its kind (livePacer.cost) measured it: a run of the same
	// bytes for every stream, and one that carries the players' figures
	// (a tick, feed lines: a row read and a message of its own for each
	// stream; 30 to 40 us each in BenchmarkLiveStreams, where assuming
	// 10 us made the first share of each tick a 10 ms poll).
	liveFirstCost        = 10 * time.Microsecond
	liveFirstFiguresCost = 40 * time.Microsecond
	// liveStateKept is how many state flushes the hub keeps for resuming
	// streams (missedState): about 20 s of them.
	liveStateKept = 64
)

// liveJob is a run of changes not yet sent to every stream that was open
// when it began. A stream opened since got them on opening, so the job
// names its streams.
//
// Each stream gets the whole run in one turn, so the loop writes it to
// the stream's socket once however many of the run's changes it reads
// (the standings of several orders, a tick's sources and news): the
// write, not the message, is what costs the loop.
type liveJob struct {
	after   int64 // the cursor before the changes; a state job's changes are older than it
	state   bool  // coalesced standings and sources, sent without ids
	changes []game.Change
	shared  [][]byte                    // by change: its message to every stream, once encoded
	mine    []func(*game.Player) []byte // by change: a feed line's or tick's encoder, once made
	to      []*liveClient               // the streams still to send to: those that read any of the changes
	figures bool                        // a change carries the players' figures (a tick, a feed line)
	cost    time.Duration               // the hub's work per stream in the last share
}

// newJob returns the job that sends changes, read after the cursor after,
// to the streams open now that read any of them; state marks a job of
// coalesced standings and sources.
func (h *liveHub) newJob(changes []game.Change, after int64, state bool) *liveJob {
	j := &liveJob{after: after, state: state, changes: changes, figures: carriesFigures(changes),
		shared: make([][]byte, len(changes)), mine: make([]func(*game.Player) []byte, len(changes))}
	j.cost = h.pace.firstCost(j.figures)
	a := audienceOf(changes)
	if a.onlyPlayers() {
		// Feed lines alone (an order's, a message's): their players'
		// streams, without a pass over every stream, which cost each
		// order a turn's share that grew with the players online.
		for id := range a.players {
			j.to = append(j.to, h.byPlayer[id]...)
		}
		return j
	}
	for cl := range h.clients {
		if a.reads(cl) {
			j.to = append(j.to, cl)
		}
	}
	return j
}

// carriesFigures reports whether any of changes carries the players'
// figures to their streams: a tick or a feed line.
func carriesFigures(changes []game.Change) bool {
	return slices.ContainsFunc(changes, func(c game.Change) bool {
		return !c.Gone && (c.Kind == game.ChangeTick || c.Kind == game.ChangeFeed)
	})
}

// liveAudience is who reads any of a run's changes (liveClient.reads), so
// that a job's streams are found in one pass over the streams, not one a
// change, or, for feed lines alone, from their players' (onlyPlayers).
type liveAudience struct {
	all      bool                  // a change every stream reads: news, a public post, a tick
	shows    liveView              // the pages that show a standing or a source among them
	factions map[game.Faction]bool // faction-only posts
	players  map[int64]bool        // feed lines
}

func audienceOf(changes []game.Change) liveAudience {
	a := liveAudience{factions: map[game.Faction]bool{}, players: map[int64]bool{}}
	for i := range changes {
		switch c := &changes[i]; {
		case c.Gone:
		case c.PlayerID != 0:
			a.players[c.PlayerID] = true
		case c.Kind == game.ChangePost && c.Post.FactionOnly:
			a.factions[c.Post.Faction] = true
		case c.Kind == game.ChangePlayer:
			a.shows |= showsStandings
		case c.Kind == game.ChangeSource:
			a.shows |= showsSources
		default:
			a.all = true
		}
	}
	return a
}

// onlyPlayers reports whether only the streams of a.players read any of
// the changes: none is read by every stream, a page or a faction.
func (a *liveAudience) onlyPlayers() bool {
	return !a.all && a.shows == 0 && len(a.factions) == 0
}

// reads reports whether cl reads any of the changes.
func (a *liveAudience) reads(cl *liveClient) bool {
	return a.all || cl.shows&a.shows != 0 || a.players[cl.player] || a.factions[cl.faction]
}

// start makes changes the hub's job and sends its first share: false if
// the job goes on (see drain).
func (h *liveHub) start(ctx context.Context, changes []game.Change, after int64, state bool) bool {
	h.job = h.newJob(changes, after, state)
	return h.drain(ctx)
}

// drain sends the job's next share (as many streams as livePacer says fit
// in liveShareBudget), reading the figures they carry in one query, and
// forgets those of them that have ended; true once the job is done. If it
// is not, the next share goes at the loop's next turn (soon), or at the
// next DrainLive or poll without one.
func (h *liveHub) drain(ctx context.Context) bool {
	j := h.job
	start, elapsed := time.Now(), time.Duration(0)
	if h.turn != nil {
		elapsed = h.turn()
	}
	budget := liveShareBudget - elapsed
	if budget < liveShareLeast && !h.put && h.soon != nil && !h.soonPending {
		// Too little of this turn is left: the whole share next turn,
		// once (a loop busy every turn still sends the least share).
		h.put = true
		h.pace.skip()
		h.goOn()
		return false
	}
	h.put = false
	h.pace.begin(start.Add(-elapsed))
	if n := min(h.pace.size(j.cost, budget), len(j.to)); n > 0 {
		h.sendRun(ctx, j, j.to[:n])
		j.to = j.to[n:]
		j.cost = time.Since(start) / time.Duration(n)
		h.pace.end(n, j.figures, j.cost)
	}
	if len(j.to) > 0 {
		h.goOn()
		return false
	}
	h.job = nil
	return true
}

// goOn has the next share of the job sent at the loop's next turn, once.
func (h *liveHub) goOn() {
	if h.soon == nil || h.soonPending {
		return
	}
	h.soonPending = true
	h.soon(func() {
		h.soonPending = false
		if h.job != nil {
			h.pace.awaited = true
			h.drain(context.Background())
		}
	})
}

// flushState starts a job of the coalesced standings and sources, if any
// are waiting and LiveStateInterval has passed since the last; the hub
// has no job under way.
func (h *liveHub) flushState(ctx context.Context) {
	now := time.Now()                                                                     // pacing, not the game's clock
	if len(h.pending) == 0 || now.Sub(h.stateAt) < LiveStateInterval-LivePollInterval/2 { // polls come late or early
		return
	}
	h.stateAt = now
	changes := slices.SortedFunc(maps.Values(h.pending), func(a, b game.Change) int { return cmp.Compare(a.ID, b.ID) })
	clear(h.pending)
	h.flushes = append(h.flushes, liveFlush{mark: h.cursor, changes: changes})
	if len(h.flushes) > liveStateKept {
		h.flushes = slices.Delete(h.flushes, 0, len(h.flushes)-liveStateKept)
	}
	h.start(ctx, changes, h.cursor, true)
}

// hold keeps the standings and sources among changes for the next state
// flush, each player's and source's latest, and returns the others.
func (h *liveHub) hold(changes []game.Change) []game.Change {
	var immediate []game.Change
	for _, c := range changes {
		if coalesced(&c) {
			h.pending[liveStateKey{c.Kind, refOf(&c)}] = c
		} else {
			immediate = append(immediate, c)
		}
	}
	return immediate
}

// coalesced reports whether change c waits for the next state flush: a
// player's standing or a source's state, whose latest is all a page
// shows.
func coalesced(c *game.Change) bool {
	return !c.Gone && (c.Kind == game.ChangePlayer || c.Kind == game.ChangeSource)
}

// liveStateKey names what a coalesced change is about.
type liveStateKey struct {
	kind game.ChangeKind
	ref  int64
}

func refOf(c *game.Change) int64 {
	if c.Player != nil {
		return c.Player.ID
	}
	return c.Source.ID
}

// liveFlush is one state flush: the hub's cursor when it went out, and
// its changes (all read after the flush before, up to the cursor).
type liveFlush struct {
	mark    int64
	changes []game.Change
}

// missedState returns the coalesced changes a stream resuming after lastID
// may have missed, which its catch-up from lastID does not send: those
// read before lastID that went out in the first state flush after it,
// when the stream may have gone already. Those of the flushes before it
// had, or its page showed; those after lastID the catch-up sends, and
// those still waiting go to every stream at the next flush.
func (h *liveHub) missedState(lastID int64) []game.Change {
	i, _ := slices.BinarySearchFunc(h.flushes, lastID, func(f liveFlush, id int64) int { return cmp.Compare(f.mark, id) })
	if i == len(h.flushes) {
		return nil
	}
	var missed []game.Change
	for _, c := range h.flushes[i].changes {
		if c.ID <= lastID {
			missed = append(missed, c)
		}
	}
	return missed
}

// sendRun sends the streams of cls, in the changes' order, each change
// of the job they read: a feed line to its player's streams and a tick
// to each with their figures, the rest to the streams that may read it.
func (h *liveHub) sendRun(ctx context.Context, j *liveJob, cls []*liveClient) {
	byPlayer := map[int64][]*liveClient{}
	for _, cl := range cls {
		if !cl.gone {
			byPlayer[cl.player] = append(byPlayer[cl.player], cl)
		}
	}
	figures := h.playersByID(ctx, j.figuresFor(byPlayer))
	to := make([]*liveClient, 0, len(cls))
	for i := range j.changes {
		c := &j.changes[i]
		switch {
		case c.Gone:
		case c.Kind == game.ChangeFeed:
			if mine := byPlayer[c.PlayerID]; mine != nil {
				h.fan(mine, j.personal(i)(figures[c.PlayerID]))
				sentFigures(mine, figures[c.PlayerID])
			}
		case c.Kind == game.ChangeTick:
			h.sendTick(j, i, byPlayer, figures)
		default:
			to = to[:0]
			for _, cl := range cls {
				if !cl.gone && cl.reads(c) {
					to = append(to, cl)
				}
			}
			if len(to) > 0 {
				if j.shared[i] == nil {
					j.shared[i] = j.message(c)
				}
				h.fan(to, j.shared[i])
			}
		}
	}
	for _, cl := range cls {
		if cl.stream.Closed() {
			h.forget(cl)
		}
	}
}

// sendTick sends the job's tick (change i) to the streams of byPlayer:
// with their player's figures to those last sent others (or none since
// they opened), and the same bytes, without figures, to all the rest
// (an ordinary tick changes nobody's): one copy for all of them.
func (h *liveHub) sendTick(j *liveJob, i int, byPlayer map[int64][]*liveClient, figures map[int64]*game.Player) {
	var same []*liveClient
	for player, mine := range byPlayer {
		p := figures[player]
		var changed []*liveClient
		for _, cl := range mine {
			if p != nil && cl.sent && cl.figures == *figuresOf(p) {
				same = append(same, cl)
			} else {
				changed = append(changed, cl)
			}
		}
		if len(changed) > 0 {
			h.fan(changed, j.personal(i)(p))
			sentFigures(changed, p)
		}
	}
	if len(same) > 0 {
		h.fan(same, j.personal(i)(nil))
	}
}

// sentFigures notes that cls were sent p's figures (none for nil).
func sentFigures(cls []*liveClient, p *game.Player) {
	if p == nil {
		return
	}
	f := *figuresOf(p)
	for _, cl := range cls {
		cl.figures, cl.sent = f, true
	}
}

// figuresFor returns the players of byPlayer whose figures the job's
// changes carry: everyone's for a tick, a feed line's player's.
func (j *liveJob) figuresFor(byPlayer map[int64][]*liveClient) []int64 {
	var ids []int64
	for i := range j.changes {
		switch c := &j.changes[i]; {
		case c.Gone:
		case c.Kind == game.ChangeTick:
			return slices.AppendSeq(ids[:0], maps.Keys(byPlayer))
		case c.Kind == game.ChangeFeed && byPlayer[c.PlayerID] != nil && !slices.Contains(ids, c.PlayerID):
			ids = append(ids, c.PlayerID)
		}
	}
	return ids
}

// message encodes change c for every stream alike: with its id, but in a
// state job without (its changes are older than what the streams were
// sent since: see liveStateMessage).
func (j *liveJob) message(c *game.Change) []byte {
	if j.state {
		return liveStateMessage(c)
	}
	return liveMessage(c, nil)
}

// personal returns the encoder of the job's change i (see personal).
func (j *liveJob) personal(i int) func(*game.Player) []byte {
	if j.mine[i] == nil {
		j.mine[i] = personal(&j.changes[i])
	}
	return j.mine[i]
}

// sendJob sends a stream opened while a job is under way the job's
// changes it may read, which the job does not send it.
func (h *liveHub) sendJob(ctx context.Context, cl *liveClient) bool {
	var me *game.Player
	for i := range h.job.changes {
		c := &h.job.changes[i]
		if c.Gone || !cl.reads(c) {
			continue
		}
		if me == nil && (c.Kind == game.ChangeFeed || c.Kind == game.ChangeTick) {
			me, _ = h.store.Player(ctx, cl.player)
		}
		msg := liveMessage(c, me)
		if h.job.state {
			msg = liveStateMessage(c)
		}
		if !cl.send(msg) {
			return false
		}
	}
	return true
}

func (h *liveHub) playersByID(ctx context.Context, ids []int64) map[int64]*game.Player {
	if len(ids) == 0 {
		return nil
	}
	players, err := h.store.PlayersByID(ctx, ids)
	if err != nil {
		h.log.Error("live: read figures", "err", err)
	}
	return players
}

// fan writes msg to the streams of cls, one copy for all of them.
func (h *liveHub) fan(cls []*liveClient, msg []byte) {
	streams := make([]*gameserver.EventStream, len(cls))
	for i, cl := range cls {
		streams[i] = cl.stream
	}
	gameserver.Broadcast(streams, msg)
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
}

// liveShareLimit is the most streams a share writes: liveShareMax, less in
// a test.
var liveShareLimit = liveShareMax

// livePacer sizes the shares of the hub's runs of changes so that each
// takes what is left of liveShareBudget of its loop turn: a stream costs
// the hub's work on it, measured in each share (liveJob.cost), and its
// socket write at the end of the turn, which the hub does not see. That
// write is estimated from the time between a share's end and the start
// of the next one's turn (Server.SetLiveTurn; without it, the share's
// start), when the next came at the loop's next turn: the median of the
// last livePaceWindow such gaps per stream. Measured to the share's own
// start, as before the turn was known, a gap also held the poll or the
// tick's step that ran before it in its turn, and the least of them was
// taken to leave those out, which left out most of the writes too.
type livePacer struct {
	gaps    [livePaceWindow]time.Duration
	next    int
	lastEnd time.Time // when the last share ended
	lastN   int       // the streams it sent
	awaited bool      // the share about to begin is the one goOn asked for, at the next turn
	// cost is the hub's work per stream in the last share of a run
	// without the players' figures [0] and of one with them [1]: the
	// first share of the next run of that kind is sized by it.
	cost [2]time.Duration
}

// begin notes that a share starts in the turn that started at turn, and
// the gap since the last one if this one came at the turn after it.
func (p *livePacer) begin(turn time.Time) {
	if p.awaited && p.lastN > 0 {
		if gap := turn.Sub(p.lastEnd); gap > 0 && gap < 10*liveShareBudget {
			p.gaps[p.next] = gap / time.Duration(p.lastN)
			p.next = (p.next + 1) % len(p.gaps)
		}
	}
	p.lastN, p.awaited = 0, false
}

// end notes that the share ends now, having sent n streams, of a run
// with the players' figures or not, at cost each.
func (p *livePacer) end(n int, figures bool, cost time.Duration) {
	p.lastEnd, p.lastN = time.Now(), n
	p.cost[kindOf(figures)] = cost
}

// firstCost is the hub's work per stream assumed for the first share of
// a run with the players' figures or not: the last share's of that kind,
// liveFirstCost or liveFirstFiguresCost before any.
func (p *livePacer) firstCost(figures bool) time.Duration {
	if c := p.cost[kindOf(figures)]; c > 0 {
		return c
	}
	if figures {
		return liveFirstFiguresCost
	}
	return liveFirstCost
}

func kindOf(figures bool) int {
	if figures {
		return 1
	}
	return 0
}

// skip notes that the share about to begin was put off to the next
// turn: the gap to it holds a turn of other work, not the last share's
// writes alone.
func (p *livePacer) skip() { p.lastN = 0 }

// write is the estimated write cost of a stream: the median gap per
// stream seen (the higher of the middle two), 0 before any.
func (p *livePacer) write() time.Duration {
	gaps := make([]time.Duration, 0, len(p.gaps))
	for _, g := range p.gaps {
		if g > 0 {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// size is how many streams of hub work cost each fit in budget.
func (p *livePacer) size(cost, budget time.Duration) int {
	per := max(cost+p.write(), time.Microsecond)
	return min(max(int(budget/per), liveShareMin), liveShareLimit)
}
