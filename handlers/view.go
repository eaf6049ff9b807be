package handlers

import (
	"html/template"
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
	{"ranking", "Ranking"}, {"news", "News"}, {"board", "Board"},
}

// rules are the game's numbers the pages quote, so the text follows the
// rules when they change.
type rules struct {
	RecruitAP, RecruitCost, FortifyAP, FortifyCost int
	RumorAP, HaggleAP, SpyAP, StealAP              int
	MaxAP, AgentUpkeep, MaxPostRunes               int
	GuardUpkeep, PayTicks, LowballShare, BurnFine  int
}

var ruleBook = rules{
	RecruitAP: game.RecruitAP, RecruitCost: game.RecruitCost,
	FortifyAP: game.FortifyAP, FortifyCost: game.FortifyCost,
	RumorAP: game.RumorAP, HaggleAP: game.HaggleAP, SpyAP: game.SpyAP, StealAP: game.StealAP,
	MaxAP: game.MaxAP, AgentUpkeep: game.AgentUpkeep, MaxPostRunes: game.MaxPostRunes,
	GuardUpkeep: game.GuardUpkeep, PayTicks: game.PayTicks, LowballShare: game.LowballShare, BurnFine: game.BurnFine,
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

var funcs = template.FuncMap{
	"faction": func(f game.Faction) string { return strings.ToLower(string(f)) },
	"stamp":   func(t time.Time) string { return t.UTC().Format(stampLayout) },
	"clock":   func(t time.Time) string { return t.UTC().Format(clockLayout) },
	"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"inc":     func(i int) int { return i + 1 },
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
}
