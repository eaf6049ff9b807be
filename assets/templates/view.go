// Package templates holds the pages of State Secrets as templ components
// (github.com/a-h/templ): each NAME.templ compiles to NAME_templ.go with
// `go tool templ generate` (run it after editing a .templ file and commit
// both; `make lint` fails when a generated file is stale).
//
// The handlers package fills a View (what the layout shows) and one page's
// data, a type that implements Page, and writes Page.Render(view). The
// compiler checks every expression against these types, and templ escapes
// what they hold by context as html/template does: text and attribute
// values are HTML-escaped, URL attributes (href, action, src...) are also
// sanitized (a javascript: URL is replaced), event-handler attributes take
// no strings. No page uses templ.Raw or templ.SafeURL.
//
// To add a page: a NAME.templ with its data type (implementing Page by
// calling a templ component that wraps its content in @layout(v)), a
// loader in the handlers package, and a golden page in handlers/testdata.
// Shared parts (the CSRF field, badges, the feed, the pager) are in
// parts.templ. Rendering is the cost of a page while nothing changes in
// the game (its data comes from the store's cache), and every { expression }
// costs a string: in a list's rows, prefer the parts that write without one
// (@stamp, @signed).
package templates

//go:generate go tool templ generate -path . -log-level warn

import (
	"context"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/statesecrets/server/assets"
	"github.com/statesecrets/server/game"
)

// View is what every page's layout reads: the player, the tabs and the
// flash.
//
// Nothing in a view may change between two requests while the game does
// not: ab counts a page whose length differs from the first as failed. So
// times are absolute and fixed-format (UTC), the CSRF token is per session
// rather than per request, and Flash is set only right after an action.
type View struct {
	Title    string
	Function string       // the game page shown, for the tabs; "login", "register" outside
	Player   *game.Player // nil when logged out
	CSRF     string       // the session's token, or the login-form token
	TID      string       // the session id when the page was reached by ?tid=, carried in links
	Flash    Flash        // the outcome of the action that led here; zero for none
	// Clock is the game's clock as the page was read (zero when logged
	// out): the live script counts protections and countdowns from it
	// until the next tick arrives.
	Clock game.Clock
}

// Flash is the outcome of the action that led to a page: what it did, or
// why it was refused (Error), with a refused post's text and channel for
// the board's form to offer again.
type Flash struct {
	Text        string // "" for no flash
	Error       bool   // refused: nothing was done
	Body        string // a refused post's text
	FactionOnly bool   // a refused post was for the faction channel
	To          string // a refused message's recipient, as typed
}

// A Page is one page's own data; Render returns the whole document (the
// layout around the page's content) for v.
type Page interface {
	Render(v *View) templ.Component
}

// Tab is one game page in the nav.
type Tab struct{ Function, Label string }

// Tabs are the game pages in the nav, in order.
var Tabs = []Tab{
	{"hq", "HQ"}, {"sources", "Sources"}, {"dossiers", "Dossiers"},
	{"ranking", "Ranking"}, {"news", "News"}, {"board", "Board"}, {"messages", "Messages"}, {"hall", "Hall of fame"},
}

// Href returns the URL of the game page function, carrying the tid when
// the page was reached by one. function is one of ours, never user input.
func (v *View) Href(function string) string {
	return "/game?function=" + function + v.tidParam("&")
}

// Profile returns the URL of the profile of the player called name.
func (v *View) Profile(name string) string {
	return "/game?function=profile&name=" + url.QueryEscape(name) + v.tidParam("&")
}

// Thread returns the URL of the viewer's conversation with the player
// called name.
func (v *View) Thread(name string) string {
	return "/game?function=messages&with=" + url.QueryEscape(name) + v.tidParam("&")
}

// unread is the unread count a tab shows: private messages on Messages,
// the faction channel's posts on Board; -1 for a tab without one.
func (v *View) unread(function string) int {
	switch function {
	case "messages":
		return v.Player.UnreadMessages
	case "board":
		return v.Player.UnreadFaction
	}
	return -1
}

// RulesURL returns the URL of the rules page, carrying the tid like Href.
func (v *View) RulesURL() string { return "/rules" + v.tidParam("?") }

// Action returns the action URL of the page's forms.
func (v *View) Action() string { return "/game" + v.tidParam("?") }

// PageHref returns the URL of page number (from 1) of the game page
// function, carrying the tid like Href.
func (v *View) PageHref(function string, number int) string {
	return "/game?function=" + function + "&page=" + strconv.Itoa(number) + v.tidParam("&")
}

// EventsURL returns the URL of the player's live event stream
// (/game/events), carrying the tid when the page was reached by one.
func (v *View) EventsURL() string { return "/game/events" + v.tidParam("?") }

// liveList is the live list kind of a paged list: only its first page
// gets new lines at the top.
func liveList(page int, kind string) string {
	if page > 1 {
		return ""
	}
	return kind
}

// protected reports whether a player protected from theft until tick
// (exclusive) still is at clock c.
func protected(c game.Clock, until int64) bool { return c.Tick < until }

// LogoutURL returns the action URL of the logout form.
func (v *View) LogoutURL() string { return "/logout" + v.tidParam("?") }

func (v *View) tidParam(sep string) string {
	if v.TID == "" {
		return ""
	}
	return sep + "tid=" + v.TID
}

// static is the URL of the static file name ("style.css") under its
// content-hashed name (assets.Path), which the handlers serve to be kept
// a year: every page's sub-resources are named through it.
func static(name string) string { return assets.Path(name) }

// Time formats: absolute, UTC, fixed width, so a page's length does not
// change with the clock.
const (
	stampLayout = "2006-01-02 15:04 UTC"
	clockLayout = "15:04:05 UTC"
)

func clock(t time.Time) string { return t.UTC().Format(clockLayout) }

// tickTime returns when tick is due on clock c: Clock.NextTick for the
// next, a multiple of Interval from LastTick for the others.
func tickTime(c game.Clock, tick int64) time.Time {
	return c.LastTick.Add(time.Duration(tick-c.Tick) * c.Interval)
}

// until says how far tick is from the clock's tick, roughly, counted in
// ticks rather than on the wall clock, so the text changes only when a
// tick does (a page re-requested while nothing changes keeps its length):
// "in 3 h", "in 40 min", "in 6 d", "now", "2 h ago".
func until(c game.Clock, tick int64) string {
	d := time.Duration(tick-c.Tick) * c.Interval
	switch {
	case d == 0:
		return "now"
	case d < 0:
		return roughly(-d) + " ago"
	}
	return "in " + roughly(d)
}

// ahead is until without its "in ", for a countdown's span (which the
// stylesheet wraps in "(in ...)" and countdown.js then keeps to the second):
// "7 d" until the script runs, or without it.
func ahead(c game.Clock, tick int64) string {
	if tick <= c.Tick {
		return "any moment"
	}
	return "in " + roughly(time.Duration(tick-c.Tick)*c.Interval)
}

// roughly writes d in its largest whole unit: "40 s", "40 min", "3 h"
// (up to 48 h), "6 d".
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " d"
}
func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// stamp is t in stampLayout as a component: @stamp(t) writes what
// { t.UTC().Format(stampLayout) } would, without making a string (and
// templ's copy of it) per line of a long list. Its output is digits, '-',
// ':', ' ' and "UTC", nothing to escape.
type stamp time.Time

// Render implements templ.Component.
func (t stamp) Render(_ context.Context, w io.Writer) error {
	var b [len(stampLayout) + 8]byte
	_, err := w.Write(time.Time(t).UTC().AppendFormat(b[:0], stampLayout))
	return err
}

// faction is the CSS class of a faction: "fbi", "mib".
func faction(f game.Faction) string { return strings.ToLower(string(f)) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// defences is what a dossier found of its target's defences, besides
// security: "trap set, sweep until tick 300, bid $250", or "no trap, no
// sweep" (a sweep over by the clock c's tick counts as none).
func defences(c game.Clock, t game.Player) string {
	parts := []string{"no trap"}
	if t.Trap {
		parts[0] = "trap set"
	}
	if t.Sweeping(c.Tick) {
		parts = append(parts, "sweep until tick "+strconv.FormatInt(t.SweepUntil, 10))
	} else {
		parts = append(parts, "no sweep")
	}
	if t.Bid > 0 {
		parts = append(parts, "bid $"+strconv.Itoa(t.Bid))
	}
	return strings.Join(parts, ", ")
}

// caseNote says whether a dossier cases its target's place for a theft at
// the clock c's tick (game.Cased): ": your file is 2 ticks old, fresh
// enough to case the place", ": your file is 9 ticks old; spy first to
// case the place", or, with no file, ": no file; spy first".
func caseNote(c game.Clock, d game.Dossier) string {
	switch age := c.Tick - d.Tick; {
	case !d.Known:
		return ": no file on them; spying first cases the place and shows their security"
	case game.Cased(d.Tick, c.Tick):
		return ": your side's file is " + ticks(age) + " old, fresh enough to case the place"
	default:
		return ": your side's file is " + ticks(age) + " old, too old to case the place (at most " +
			strconv.Itoa(game.CaseTicks) + "); spy first"
	}
}

// ticks is "1 tick" or "n ticks".
func ticks(n int64) string {
	if n == 1 {
		return "1 tick"
	}
	return strconv.FormatInt(n, 10) + " ticks"
}

// repeated is a line of the news and how many times in a row it came.
type repeated struct {
	game.Event
	Times int
}

// collapse folds each run of events with the same text (newest first) into
// its newest, counting them.
func collapse(events []game.Event) []repeated {
	var out []repeated
	for _, e := range events {
		if n := len(out); n > 0 && out[n-1].Text == e.Text {
			out[n-1].Times++
			continue
		}
		out = append(out, repeated{Event: e, Times: 1})
	}
	return out
}
