package handlers

import (
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/statesecrets/server/game"
)

// view is what every template gets: the layout reads the player, the tabs
// and the flash; the page's own content reads Data.
//
// Nothing in a view may change between two requests while the game does
// not: ab counts a page whose length differs from the first as failed. So
// times are absolute and fixed-format (UTC), the CSRF token is per session
// rather than per request, and Flash is set only right after an action.
type view struct {
	Title    string
	Function string       // the game page shown, for the tabs; "login", "register" outside
	Player   *game.Player // nil when logged out
	CSRF     string       // the session's token, or the login-form token
	TID      string       // the session id when the page was reached by ?tid=, carried in links
	Flash    *flash
	Tabs     []tab
	Rules    rules
	Data     any
}

type tab struct{ Function, Label string }

// tabs are the game pages in the nav, in order.
var tabs = []tab{
	{"hq", "HQ"}, {"sources", "Sources"}, {"dossiers", "Dossiers"},
	{"ranking", "Ranking"}, {"news", "News"}, {"board", "Board"}, {"hall", "Hall of fame"},
}

// rules are the game's numbers the pages quote, so the text follows the
// rules when they change.
type rules struct {
	RecruitAP, RecruitCost, FortifyAP, FortifyCost int
	RumorAP, HaggleAP, SpyAP, StealAP              int
	MaxAP, AgentUpkeep, MaxPostRunes               int
	GuardUpkeep, PayTicks, LowballShare, BurnFine  int
	RoundTop, KeepFeed                             int
}

var ruleBook = rules{
	RecruitAP: game.RecruitAP, RecruitCost: game.RecruitCost,
	FortifyAP: game.FortifyAP, FortifyCost: game.FortifyCost,
	RumorAP: game.RumorAP, HaggleAP: game.HaggleAP, SpyAP: game.SpyAP, StealAP: game.StealAP,
	MaxAP: game.MaxAP, AgentUpkeep: game.AgentUpkeep, MaxPostRunes: game.MaxPostRunes,
	GuardUpkeep: game.GuardUpkeep, PayTicks: game.PayTicks, LowballShare: game.LowballShare, BurnFine: game.BurnFine,
	RoundTop: game.RoundTop, KeepFeed: game.KeepFeed,
}

// newView returns the view for a page titled title; v may be nil (no
// session).
func (s *Server) newView(v *viewer, function, title string) *view {
	p := &view{Title: title, Function: function, Tabs: tabs, Rules: ruleBook}
	if v != nil {
		p.Player = v.player
		p.CSRF = s.csrfToken(v.sid)
		if v.viaTID {
			p.TID = v.sid
		}
	}
	return p
}

// Href returns the URL of the game page function, carrying the tid when
// the page was reached by one. function is one of ours, never user input.
func (v *view) Href(function string) string {
	return "/game?function=" + function + v.tidParam("&")
}

// Profile returns the URL of the profile of the player called name.
func (v *view) Profile(name string) string {
	return "/game?function=profile&name=" + url.QueryEscape(name) + v.tidParam("&")
}

// Action returns the action URL of the page's forms.
func (v *view) Action() string { return "/game" + v.tidParam("?") }

// LogoutURL returns the action URL of the logout form.
func (v *view) LogoutURL() string { return "/logout" + v.tidParam("?") }

func (v *view) tidParam(sep string) string {
	if v.TID == "" {
		return ""
	}
	return sep + "tid=" + v.TID
}

// Time formats: absolute, UTC, fixed width, so a page's length does not
// change with the clock.
const (
	stampLayout = "2006-01-02 15:04 UTC"
	clockLayout = "15:04:05 UTC"
)

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
	if d == 0 {
		return "now"
	}
	if d < 0 {
		return roughly(-d) + " ago"
	}
	return "in " + roughly(d)
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

var funcs = template.FuncMap{
	"tickTime": tickTime,
	"until":    until,
	"faction":  func(f game.Faction) string { return strings.ToLower(string(f)) },
	"stamp":    func(t time.Time) string { return t.UTC().Format(stampLayout) },
	"clock":    func(t time.Time) string { return t.UTC().Format(clockLayout) },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"inc":      func(i int) int { return i + 1 },
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
}
