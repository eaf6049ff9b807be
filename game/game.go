// Package game holds the rules of State Secrets, a small tick-based multiplayer
// espionage game (FBI against the Men in Black), and its SQLite store.
//
// The domain types, errors and the pure rules (rules.go) know nothing of the
// database; Store (store.go and friends) keeps them in one SQLite file through
// modernc.org/sqlite. RULES.md describes the game for players.
package game

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Faction is one of the two sides a player belongs to for the whole life of the account.
type Faction string

// The two factions.
const (
	FBI Faction = "FBI"
	MIB Faction = "MIB"
)

// ParseFaction returns the faction named s ("FBI" or "MIB", case-insensitive).
// Anything else is an EINVALID error naming the accepted values.
func ParseFaction(s string) (Faction, error) {
	switch Faction(strings.ToUpper(strings.TrimSpace(s))) {
	case FBI:
		return FBI, nil
	case MIB:
		return MIB, nil
	}
	return "", Errorf(EINVALID, "Unknown faction %q: choose FBI or MIB.", s)
}

// Player is one account and its current stats for the round.
type Player struct {
	ID       int64
	Name     string
	Faction  Faction
	Cash     int // dollars
	Agents   int // attack strength for spying and stealing; each costs upkeep per tick
	Security int // defence against spying and stealing
	Secrets  int // what wins the round
	AP       int // action points, 0..MaxAP

	// ProtectedUntil is the tick number up to which (exclusive) the player
	// cannot be stolen from; new players get NewPlayerProtection ticks.
	ProtectedUntil int64
	// Bid is the sealed bid, in dollars, the player holds at the broker's
	// next auction (see Auction), set aside from Cash; 0: none. BidTick is
	// the tick it was placed (of bids level, the earlier wins).
	Bid     int
	BidTick int64
	// Trap is whether the player has a trap set for thieves (see TrapAP);
	// SweepUntil the tick up to which (exclusive) their counter-intelligence
	// sweep runs (see SweepAP).
	Trap       bool
	SweepUntil int64
	// LieLowUntil is the tick up to which (exclusive) the player's agents
	// lie low after a theft and can attempt none (StealCooldown).
	LieLowUntil int64
	// LastLot is whether the player bought a Secret at the round's last
	// auction (the broker's last call): of players level on Secrets when
	// the round ends, those who did place ahead (Rank).
	LastLot   bool
	CreatedAt time.Time
	// Acted is true once the player has taken any action (headquarters
	// shows a first-visit guide until then). A new round keeps it.
	Acted bool
	// UnreadMessages counts the private messages to the player not read
	// yet; UnreadFaction the posts by others on the player's faction
	// channel since the player last opened the board. Only the player
	// sees them.
	UnreadMessages, UnreadFaction int
	// Career is what the player did in the rounds that ended: it outlasts
	// them, where the rest of the stats reset.
	Career Career
}

// Career is a player's record over the finished rounds.
type Career struct {
	Rounds    int // rounds played to their end
	Wins      int // rounds won (RoundResult.Champion)
	BestPlace int // the best final place, from 1; 0 before any round ended
	// Gold, Silver and Bronze count the rounds ended in first, second and
	// third place holding at least one Secret.
	Gold, Silver, Bronze int
}

// Medals returns Gold + Silver + Bronze.
func (c Career) Medals() int { return c.Gold + c.Silver + c.Bronze }

// record adds a round ended in place (from 1) holding secrets, won or not.
func (c *Career) record(place, secrets int, won bool) {
	c.Rounds++
	if won {
		c.Wins++
	}
	if c.BestPlace == 0 || place < c.BestPlace {
		c.BestPlace = place
	}
	if secrets > 0 {
		switch place {
		case 1:
			c.Gold++
		case 2:
			c.Silver++
		case 3:
			c.Bronze++
		}
	}
}

// Protected reports whether p cannot be stolen from at tick now.
func (p Player) Protected(now int64) bool { return now < p.ProtectedUntil }

// Source is an informant who sells Secrets to whoever haggles well enough.
type Source struct {
	ID          int64
	Name        string
	Description string
	Secrets     int   // secrets it holds for sale, 0..MaxSourceSecrets
	Price       int   // current asking price for one Secret, in dollars
	BasePrice   int   // the price it drifts back to on a round's first day (DayPrice), one step per tick
	Heat        int   // 0..100; at BurnHeat it burns
	BurnedUntil int64 // tick up to which (exclusive) it is burned and cannot be haggled with
}

// Burned reports whether the source is burned (out of play) at tick now.
func (s Source) Burned(now int64) bool { return now < s.BurnedUntil }

// Event is one line of a player's feed or of the public news.
type Event struct {
	ID       int64
	Tick     int64
	At       time.Time
	PlayerID int64  // whose feed it is in; 0 for public news only
	Public   bool   // shown in the news
	Text     string // plain text, to be rendered escaped
}

// Dossier is what a player's faction knows about another player.
type Dossier struct {
	Target Player    // ID, Name, Faction, Secrets, ProtectedUntil always set (and current: public); the rest only as of the last successful spy
	Known  bool      // false: never spied on successfully by the player or a teammate
	Tick   int64     // when the intel was gathered
	At     time.Time // when the intel was gathered
	By     string    // the name of who gathered it (the player or a teammate); "" when not Known
}

// Post is a message on the board.
type Post struct {
	ID          int64
	Author      string
	Faction     Faction // the author's
	FactionOnly bool    // on the faction-only channel: only the author's faction reads it
	Body        string
	At          time.Time
}

// Clock is the game's time: which tick and round it is and when the next tick is due.
type Clock struct {
	Tick       int64         // ticks since the game began
	Round      int           // current round number, from 1
	RoundStart int64         // tick the round began
	RoundTicks int64         // ticks per round
	LastTick   time.Time     // when Tick was applied (the scheduled time, not the wall time it ran)
	Interval   time.Duration // time between ticks
}

// Day returns the day of the round, from 0, that tick falls in: a day is
// AuctionTicks ticks from the round's start.
func (c Clock) Day(tick int64) int { return int(max(0, tick-c.RoundStart) / AuctionTicks) }

// NextTick returns when the next tick is due: LastTick + Interval.
func (c Clock) NextTick() time.Time { return c.LastTick.Add(c.Interval) }

// RoundEnd returns the tick at which the current round ends and the next begins.
func (c Clock) RoundEnd() int64 { return c.RoundStart + c.RoundTicks }

// FactionTotal sums one faction's players. The faction score is Secrets
// per player (Score), so sides of different sizes compete on equal terms.
type FactionTotal struct {
	Faction Faction
	Players int
	Secrets int
}

// Score returns the faction's Secrets per player, 0 with no players.
func (f FactionTotal) Score() float64 {
	if f.Players == 0 {
		return 0
	}
	return float64(f.Secrets) / float64(f.Players)
}

// Ranking is the scoreboard of the current round.
type Ranking struct {
	Players []Player // by Secrets desc, then Name (see Rank)
	// Places are the places of Players, from 1: players level on Secrets
	// share one (SharedPlaces).
	Places   []int
	Factions []FactionTotal // FBI, then MIB
}

// PageSize is how many rows one page of a long list shows: the dossiers,
// the ranking, the news and the board.
const PageSize = 50

// Page is one page of a long list, PageSize rows at most.
type Page[T any] struct {
	Rows   []T
	Number int // which page, from 1
	Total  int // rows in the whole list
}

// Pages returns how many pages the whole list takes: at least 1, even when
// it is empty.
func (p Page[T]) Pages() int { return max(1, (p.Total+PageSize-1)/PageSize) }

// Offset returns the place in the whole list of Rows[0], from 0.
func (p Page[T]) Offset() int { return (p.Number - 1) * PageSize }

// pageNumber returns n clamped to the pages of a list of total rows: below 1
// is the first page, past the last the last.
func pageNumber(n, total int) int {
	return min(max(n, 1), Page[struct{}]{Total: total}.Pages())
}

// RoundTop is how many players of a finished round the hall of fame keeps.
const RoundTop = 10

// RoundResult is a finished round, as the hall of fame keeps it.
type RoundResult struct {
	Round   int
	EndTick int64     // the tick that ended it (and began the next)
	EndedAt time.Time // when that tick was due
	Winner  Faction   // by Secrets per player, as Ranking.Winner; "" when level
	// Factions are FBI, then MIB, as the round ended: Players and Secrets.
	Factions []FactionTotal
	// Top are the best RoundTop players, place 1 first; players level on
	// Secrets share a place, and of those level at the last place kept,
	// the ones who enlisted first are kept (Ranking.best).
	Top []Placing
}

// Champion returns the round's winning agent: the player in first place,
// if they held at least one Secret ("whoever holds the most Secrets wins")
// and nobody shared it (of players level on Secrets, one who bought a
// Secret at the round's last auction places ahead; cash breaks no tie,
// see Rank). false otherwise: a round nobody won.
func (r *RoundResult) Champion() (Placing, bool) {
	if len(r.Top) == 0 || r.Top[0].Secrets == 0 {
		return Placing{}, false
	}
	if len(r.Top) > 1 && r.Top[1].Place == r.Top[0].Place {
		return Placing{}, false
	}
	return r.Top[0], true
}

// Placing is one player's place in a finished round.
type Placing struct {
	Round    int
	Place    int   // from 1
	PlayerID int64 // 0 once the account is gone
	Name     string
	Faction  Faction
	Secrets  int
	Cash     int // dollars
}

// Profile is what anyone may see of a player: who they are, where they
// stand and what they did in public.
type Profile struct {
	// Player is the player as stored, covert figures included: a page
	// shows of it only what Disclose lets its viewer see (the ranking's
	// figures, the career), never the cash, agents, security or AP.
	Player    Player
	Place     int // in the current round's ranking, from 1, shared with players level on Secrets
	Players   int // in the ranking
	RoundsWon int // finished rounds the player won (RoundResult.Champion)
	Placings  []Placing
	Posts     []Post // the latest ProfilePosts public board posts, newest first
}

// ProfilePosts is how many of a player's public posts a profile shows.
const ProfilePosts = 10

// ActionKind names an action a player can take.
type ActionKind string

// The actions; see RULES.md for their costs and odds.
const (
	Recruit     ActionKind = "recruit"
	Fortify     ActionKind = "fortify"
	Rumor       ActionKind = "rumor"
	Haggle      ActionKind = "haggle"
	Spy         ActionKind = "spy"
	Steal       ActionKind = "steal"
	PostMessage ActionKind = "post"
	// Message sends a private message (Body) to the player named To.
	Message ActionKind = "message"
	// Bid places (or changes, or with Offer 0 withdraws) the player's
	// sealed bid of Offer dollars at the broker's next auction.
	Bid ActionKind = "bid"
	// Trap sets a trap for thieves; Sweep runs a counter-intelligence
	// sweep against spies. The defender's moves: see RULES.md.
	Trap  ActionKind = "trap"
	Sweep ActionKind = "sweep"
)

// Action is one move by a player. Only the fields its Kind uses are read.
type Action struct {
	Kind     ActionKind
	SourceID int64 // haggle
	TargetID int64 // spy, steal
	Offer    int   // haggle: in dollars, 1..the player's cash; bid: in dollars, 0 (withdraw) or AuctionMinBid..cash plus the bid held
	// Price is, for a haggle, the asking price the player saw when making
	// the offer; 0 means unchecked. If the source's price has risen since
	// and Offer is below the new price, the haggle is refused (EINVALID,
	// naming the new price and odds) and changes nothing; a price that
	// fell only improves the odds, and the haggle goes ahead.
	Price int
	Body  string // post, message: 1..MaxPostRunes runes after trimming spaces
	To    string // message: the name of the player it is for
	// FactionOnly puts a post on the faction-only channel, read by the
	// actor's faction alone; false posts to everyone.
	FactionOnly bool
	// Count repeats an order that takes no choice (Batchable: recruit,
	// fortify, rumor) up to Count times, 1..MaxBatch; 0 means 1. The
	// batch stops at the first order the rules refuse (out of AP or
	// cash): the ones before it stand, and the outcome says why it
	// stopped. Other kinds take only 0 or 1.
	Count int
}

// MaxBatch is the most orders one batch (Action.Count) gives: a full day
// of AP.
const MaxBatch = MaxAP

// Batchable reports whether orders of kind k may come in a batch
// (Action.Count above 1): those that take no choice.
func Batchable(k ActionKind) bool { return k == Recruit || k == Fortify || k == Rumor }

// Outcome is what happened, one sentence for the player (a batch: one
// for each order, numbered, and why it stopped short, if it did).
type Outcome struct {
	Text string
	// Orders is how many orders it carried out: 1, or a batch's count
	// (fewer when it stopped short).
	Orders int
}

// Error codes, wtf-style: handlers map each to an HTTP status in one place.
const (
	EINVALID      = "invalid"      // the player's mistake: bad input, not enough AP or cash...
	ENOTFOUND     = "not_found"    // no such player, source or target
	ECONFLICT     = "conflict"     // e.g. the name is taken
	EUNAUTHORIZED = "unauthorized" // bad password, unknown or expired session
	EINTERNAL     = "internal"     // anything else; details are logged, not shown
)

// Error is an error the player may see: Message is safe to show.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string { return "game: " + e.Code + ": " + e.Message }

// Errorf returns an *Error with the code and a formatted, user-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: "" for nil, the Code of an *Error in its
// chain, EINTERNAL for anything else.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e := (*Error)(nil); errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of err: "" for nil, the Message
// of an *Error in its chain, "Internal error." for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	if e := (*Error)(nil); errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// Session is a logged-in browser: a random id and whose it is until when.
type Session struct {
	ID       string // 32 lowercase hex digits = 128 random bits
	PlayerID int64
	Expires  time.Time
}

// Options configure a Store. The zero value is the production game.
type Options struct {
	TickInterval time.Duration // time between ticks; 0 means 10 minutes
	RoundTicks   int64         // ticks per round; 0 means one week of ticks (7*24h / TickInterval)
	SessionTTL   time.Duration // how long a session lasts; 0 means 30 days
	// MaxPlayers caps the accounts: registration beyond it is refused
	// (ECONFLICT, "the game is full"). 0 means no cap.
	MaxPlayers int
	// KeepChanges is how many of the newest live-page changes each
	// applied tick keeps (see ChangesSince); 0 means DefaultKeepChanges.
	KeepChanges int
	// PaySlice is how many players one step of a payday pays (see
	// Store.TickStep), so that no step holds the loop for long; a payday of
	// at most PaySlice players is applied in one step. 0 means
	// DefaultPaySlice.
	PaySlice int
	// PruneSlice is how many players' histories (feed lines, reports,
	// messages past what the tick keeps) one step of a tick prunes (see
	// Store.TickStep); 0 means DefaultPruneSlice.
	PruneSlice int
	// NoReadCache turns the read cache (cache.go) off, so that every page
	// reads the database afresh: a teaching switch for the load test's
	// head-of-line lesson (what each page costs the loop without it), which
	// no deployment should set. False, the zero value, keeps the cache on.
	NoReadCache bool
	// CheckpointInterval is how often the Store checkpoints its WAL from
	// a goroutine and connection of its own (checkpoint.go), so that the
	// callers' commits never wait for the checkpoint's fsyncs. 0 means
	// DefaultCheckpointInterval (1 s); negative means none: SQLite then
	// checkpoints in the commit that takes the WAL past 1,000 pages, on
	// the committing caller's goroutine.
	CheckpointInterval time.Duration
	BcryptCost         int              // 0 means bcrypt.DefaultCost; tests use bcrypt.MinCost
	Rand               *rand.Rand       // math/rand/v2; nil means seeded from crypto/rand. Tests fix it.
	Now                func() time.Time // nil means time.Now
}
