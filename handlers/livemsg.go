package handlers

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// The live stream's messages, in the WHATWG HTML standard's
// text/event-stream format (section 9.2, server-sent events): each is
// "event: KIND", "id: CURSOR" and one "data: JSON" line, then a blank
// line. The id is the game.Change id, so a browser that reconnects sends
// it back as Last-Event-ID and resumes after it. JSON never holds a raw
// newline, so data is always one line.

// liveFigures are a player's own figures, for the masthead and the HQ
// stats: sent with every feed line and tick of theirs.
type liveFigures struct {
	AP       int `json:"ap"`
	MaxAP    int `json:"maxAP"`
	Cash     int `json:"cash"`
	Agents   int `json:"agents"`
	Security int `json:"security"`
	Secrets  int `json:"secrets"`
	// ProtectedUntil is the tick up to which (exclusive) nobody can steal
	// from the player: HQ's protection line follows it.
	ProtectedUntil int64 `json:"protectedUntil"`
	// The unread counts of the Messages and Board tabs.
	UnreadMessages int `json:"unreadMessages"`
	UnreadFaction  int `json:"unreadFaction"`
}

func figuresOf(p *game.Player) *liveFigures {
	if p == nil {
		return nil
	}
	return &liveFigures{AP: p.AP, MaxAP: game.MaxAP, Cash: p.Cash, Agents: p.Agents, Security: p.Security, Secrets: p.Secrets,
		ProtectedUntil: p.ProtectedUntil, UnreadMessages: p.UnreadMessages, UnreadFaction: p.UnreadFaction}
}

// liveLine is a feed or news line.
type liveLine struct {
	Text  string       `json:"text"`
	Tick  int64        `json:"tick"`
	At    time.Time    `json:"at"`
	Alert bool         `json:"alert,omitempty"` // another player did something to you
	Me    *liveFigures `json:"me,omitempty"`    // feed lines: your figures after it
}

type livePost struct {
	Author      string       `json:"author"`
	Faction     game.Faction `json:"faction"`
	FactionOnly bool         `json:"factionOnly,omitempty"` // on the author's faction's channel
	Body        string       `json:"body"`
	At          time.Time    `json:"at"`
}

type liveTick struct {
	Tick     int64        `json:"tick"`
	Round    int          `json:"round"`
	RoundEnd int64        `json:"roundEnd"`   // the tick the round ends at
	EndsAt   time.Time    `json:"roundEndAt"` // when that tick is due
	Next     time.Time    `json:"next"`       // when the next tick is due
	Interval int64        `json:"interval"`   // between two ticks, in milliseconds: when a later tick is due
	Me       *liveFigures `json:"me,omitempty"`
}

type liveSource struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Price       int    `json:"price"`
	Secrets     int    `json:"secrets"`
	Heat        int    `json:"heat"`        // 0..game.BurnHeat, shown as a percentage
	BurnedUntil int64  `json:"burnedUntil"` // tick; burned while the clock is below it
}

// livePlayer is a player's standing as everyone sees it, on the ranking
// and the dossiers; never their cash, AP, agents or security (a dossier's,
// from a successful spy).
type livePlayer struct {
	ID             int64        `json:"id"`
	Name           string       `json:"name"`
	Faction        game.Faction `json:"faction"`
	Secrets        int          `json:"secrets"`
	ProtectedUntil int64        `json:"protectedUntil"` // tick; nobody can steal from them while the clock is below it
}

// livePayload is what change c carries for the player whose figures are me
// (nil: not sent, for shared messages).
func livePayload(c *game.Change, me *game.Player) any {
	switch c.Kind {
	case game.ChangeFeed, game.ChangeNews:
		l := liveLine{Text: c.Event.Text, Tick: c.Event.Tick, At: c.Event.At, Alert: c.Alert}
		if c.Kind == game.ChangeFeed {
			l.Me = figuresOf(me)
		}
		return l
	case game.ChangePost:
		o := c.Post
		return livePost{Author: o.Author, Faction: o.Faction, FactionOnly: o.FactionOnly, Body: o.Body, At: o.At}
	case game.ChangeTick:
		k := c.Clock
		endsAt := k.LastTick.Add(time.Duration(k.RoundEnd()-k.Tick) * k.Interval)
		return liveTick{Tick: k.Tick, Round: k.Round, RoundEnd: k.RoundEnd(), EndsAt: endsAt, Next: k.NextTick(),
			Interval: k.Interval.Milliseconds(), Me: figuresOf(me)}
	case game.ChangeSource:
		o := c.Source
		return liveSource{ID: o.ID, Name: o.Name, Price: o.Price, Secrets: o.Secrets, Heat: o.Heat, BurnedUntil: o.BurnedUntil}
	case game.ChangePlayer:
		p := c.Player
		return livePlayer{ID: p.ID, Name: p.Name, Faction: p.Faction, Secrets: p.Secrets, ProtectedUntil: p.ProtectedUntil}
	}
	return nil
}

// liveMessage encodes change c as one event-stream message for the
// player me (see livePayload).
func liveMessage(c *game.Change, me *game.Player) []byte {
	return liveEncode(c, me, true)
}

// liveStateMessage encodes a coalesced change (a standing, a source; see
// LiveStateInterval) without its id: it goes out after changes with
// later ids, and an id would move the browser's Last-Event-ID back, so
// that a reconnect would replay those. A resuming stream is sent the
// coalesced changes it may have missed (liveHub.stateFrom).
func liveStateMessage(c *game.Change) []byte {
	return liveEncode(c, nil, false)
}

// liveEncode is liveMessage with the id line or without.
func liveEncode(c *game.Change, me *game.Player, withID bool) []byte {
	data, err := json.Marshal(livePayload(c, me))
	if err != nil { // only plain fields: cannot happen
		panic("handlers: live message: " + err.Error())
	}
	b := make([]byte, 0, len(data)+48)
	b = append(b, "event: "...)
	b = append(b, c.Kind...)
	if withID {
		b = append(b, "\nid: "...)
		b = strconv.AppendInt(b, c.ID, 10)
	}
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// Messages without a change behind them.
var (
	// liveHeartbeat is a comment line: it keeps proxies and the browser
	// from timing the idle stream out, and shows nothing.
	liveHeartbeat = []byte(":\n\n")
	// liveReset says changes were missed (pruned before the browser came
	// back): the page should reload. retry is the reconnect delay in ms.
	liveReset = []byte("event: reset\ndata: {}\n\n")
)

// personal returns the encoder of change c, a feed line or a tick, for
// each recipient's figures: the shared part is encoded once, and each
// player's figures spliced in where json.Marshal puts Me (the last field
// of liveLine and liveTick), so the bytes are liveMessage(c, me)'s.
func personal(c *game.Change) func(me *game.Player) []byte {
	base := liveMessage(c, nil)
	cut := len(base) - len("}\n\n")
	return func(me *game.Player) []byte {
		if me == nil {
			return base
		}
		b := make([]byte, 0, len(base)+128)
		b = append(b, base[:cut]...)
		b = append(b, `,"me":`...)
		b = appendFigures(b, figuresOf(me))
		return append(b, "}\n\n"...)
	}
}

// appendFigures appends f as json.Marshal encodes it.
func appendFigures(b []byte, f *liveFigures) []byte {
	for _, kv := range [...]struct {
		key string
		n   int64
	}{{`{"ap":`, int64(f.AP)}, {`,"maxAP":`, int64(f.MaxAP)}, {`,"cash":`, int64(f.Cash)}, {`,"agents":`, int64(f.Agents)},
		{`,"security":`, int64(f.Security)}, {`,"secrets":`, int64(f.Secrets)}, {`,"protectedUntil":`, f.ProtectedUntil},
		{`,"unreadMessages":`, int64(f.UnreadMessages)}, {`,"unreadFaction":`, int64(f.UnreadFaction)}} {
		b = append(b, kv.key...)
		b = strconv.AppendInt(b, kv.n, 10)
	}
	return append(b, '}')
}

// liveHello opens every stream: the reconnect delay (the WHATWG retry
// field, in milliseconds) and the cursor the stream starts after, so a
// browser that reconnects before any change resumes from there.
func liveHello(cursor int64) []byte {
	return liveEvent(gameserver.Event{Event: "hello", ID: strconv.FormatInt(cursor, 10), Retry: liveRetryDelay, Data: "{}"})
}

// liveRetryDelay is the reconnect delay every stream's hello sets.
const liveRetryDelay = 3 * time.Second

// liveHelloResume opens a stream that resumes: the same hello without an
// id, so the browser's Last-Event-ID stays where it was until the replay
// of what it missed moves it (see liveHub.open).
var liveHelloResume = liveEvent(gameserver.Event{Event: "hello", Retry: liveRetryDelay, Data: "{}"})

// liveID sets the browser's Last-Event-ID to cursor without an event (a
// message with no data dispatches nothing; WHATWG HTML 9.2.6 sets the id
// all the same).
func liveID(cursor int64) []byte {
	return liveEvent(gameserver.Event{ID: strconv.FormatInt(cursor, 10)})
}

// liveLogout ends the stream of a session that ended (logout here or
// everywhere, expiry): the page says so and stops reconnecting (were it to
// reconnect, the answer would be 204 No Content, which stops it too).
var liveLogout = liveEvent(gameserver.Event{Event: "logout", Data: "{}"})

// liveStop ends a stream that must not come back, for reason: "tabs" (the
// session or player opened more streams than LiveStreamsPerSession or
// LiveStreamsPerPlayer, and this is the oldest) or "address" (its address
// holds LiveStreamsPerAddress already). The page stops reconnecting and
// says why.
func liveStop(reason string) []byte {
	return liveEvent(gameserver.Event{Event: "stop", Data: `{"reason":"` + reason + `"}`})
}

// liveRenew ends a stream at the end of its lifetime: the browser
// reconnects after ms milliseconds (the retry field) and resumes, and the
// page shows no notice for it.
func liveRenew(ms int) []byte {
	return liveEvent(gameserver.Event{Event: "renew", Retry: time.Duration(ms) * time.Millisecond, Data: "{}"})
}

// liveRetry is the whole body of an open refused for now: the browser
// reconnects after ms milliseconds (at least 1: a zero Retry sends none).
func liveRetry(ms int64) []byte {
	return liveEvent(gameserver.Event{Retry: time.Duration(max(ms, 1)) * time.Millisecond})
}

// liveEvent frames e, whose id and type are the handlers' own (never a
// line break).
func liveEvent(e gameserver.Event) []byte {
	b, err := e.MarshalText()
	if err != nil {
		panic("handlers: live message: " + err.Error())
	}
	return b
}
