package game

import (
	"fmt"
	"strings"
)

// The rules on information: what a viewer may see of a player, in one
// table (Disclose), which every page and the live stream follow, RULES.md
// states (its "What others see", generated from it), and a test of the
// handlers checks on every page and live event. Pure: no database.
//
// Build on it rather than beside it: a page that shows a figure of
// another player asks Disclose (or Sees) how its viewer may see it; the
// odds a player is shown for a spy or a theft use the target's figures
// only as the viewer may know them (KnownFigure: a dossier's), never the
// live ones.

// Figure is one thing the game knows of a player.
type Figure string

// The figures. Public ones first, then the covert ones (each player's own,
// and a rival's only as a spy or an order saw them), then the private ones.
const (
	FigureName       Figure = "name"
	FigureFaction    Figure = "faction"
	FigureJoined     Figure = "joined"     // when they enlisted
	FigureSecrets    Figure = "secrets"    // the Secrets held now, and the place they give in the ranking
	FigureProtection Figure = "protection" // the tick up to which nobody can steal from them
	FigureCareer     Figure = "career"     // rounds played and won, medals, best place
	FigureFinal      Figure = "final"      // Secrets and cash as a finished round closed (hall of fame, news)
	FigurePosts      Figure = "posts"      // their posts on the public board
	FigureCash       Figure = "cash"
	FigureAgents     Figure = "agents"
	FigureSecurity   Figure = "security"
	FigureAP         Figure = "ap"
	FigureTrap       Figure = "trap"     // whether a trap is set
	FigureSweep      Figure = "sweep"    // the tick up to which a counter-intelligence sweep runs
	FigureBid        Figure = "bid"      // the sealed bid held at the broker's
	FigureLieLow     Figure = "lie-low"  // the tick up to which their agents lie low after a theft
	FigureChannel    Figure = "channel"  // their posts on their faction's channel
	FigureWire       Figure = "wire"     // the lines of their feed
	FigureMessages   Figure = "messages" // their private messages with others
	FigureUnread     Figure = "unread"   // their unread counts (messages, faction channel)
)

// Relation is how a viewer stands to the player seen.
type Relation int

// The relations: the player themselves, a player of the same faction,
// one of the other.
const (
	Self Relation = iota
	Teammate
	Rival
)

// String names r: self, teammate or rival.
func (r Relation) String() string {
	switch r {
	case Self:
		return "self"
	case Teammate:
		return "teammate"
	case Rival:
		return "rival"
	}
	return fmt.Sprintf("Relation(%d)", int(r))
}

// Relate returns how viewer stands to p: Self for the same player (by ID),
// Teammate for the same faction, Rival otherwise.
func Relate(viewer, p *Player) Relation {
	switch {
	case viewer.ID == p.ID:
		return Self
	case viewer.Faction == p.Faction:
		return Teammate
	}
	return Rival
}

// Access is how a viewer may see a figure: a set of ways, Hidden (none)
// or any of Live, ByDossier and ByReport.
type Access uint8

// The ways a figure may be seen.
const (
	Hidden Access = 0
	// Live: as it stands now, on any page and live event.
	Live Access = 1 << iota
	// ByDossier: only as it stood when the viewer's side last spied on the
	// player successfully (Dossier, Known), on the dossiers page; never as
	// it stands now.
	ByDossier
	// ByReport: only as it stood when an order between the two was played,
	// in that order's report (Report): the target's to the attacker; the
	// attacker's to the target, when the order was seen (ReportFor).
	ByReport
)

// Has reports whether a allows the way w.
func (a Access) Has(w Access) bool { return a&w != 0 }

// String says a as RULES.md does: "yes", "no", "from a dossier", "from a
// dossier or a report".
func (a Access) String() string {
	if a.Has(Live) {
		return "yes"
	}
	var ways []string
	if a.Has(ByDossier) {
		ways = append(ways, "a dossier")
	}
	if a.Has(ByReport) {
		ways = append(ways, "a report")
	}
	if len(ways) == 0 {
		return "no"
	}
	return "from " + strings.Join(ways, " or ")
}

// disclosure is the table: for each figure, each Relation's Access
// (indexed by Self, Teammate, Rival).
var disclosure = map[Figure][3]Access{
	FigureName:       {Live, Live, Live},
	FigureFaction:    {Live, Live, Live},
	FigureJoined:     {Live, Live, Live},
	FigureSecrets:    {Live, Live, Live},
	FigureProtection: {Live, Live, Live},
	FigureCareer:     {Live, Live, Live},
	FigureFinal:      {Live, Live, Live},
	FigurePosts:      {Live, Live, Live},
	FigureCash:       {Live, Hidden, ByDossier},
	FigureAgents:     {Live, Hidden, ByDossier | ByReport},
	FigureSecurity:   {Live, Hidden, ByDossier | ByReport},
	FigureAP:         {Live, Hidden, ByDossier},
	FigureTrap:       {Live, Hidden, ByDossier | ByReport},
	FigureSweep:      {Live, Hidden, ByDossier | ByReport},
	FigureBid:        {Live, Hidden, ByDossier},
	FigureLieLow:     {Live, Hidden, Hidden},
	FigureChannel:    {Live, Live, Hidden},
	FigureWire:       {Live, Hidden, Hidden},
	FigureMessages:   {Live, Hidden, Hidden},
	FigureUnread:     {Live, Hidden, Hidden},
}

// figures are the table's figures in order, and how RULES.md names each.
var figures = []struct {
	f    Figure
	name string
}{
	{FigureName, "name"}, {FigureFaction, "faction"}, {FigureJoined, "when they enlisted"},
	{FigureSecrets, "Secrets held, and the place they give"}, {FigureProtection, "protection from theft"},
	{FigureCareer, "career (rounds, wins, medals, best place)"},
	{FigureFinal, "Secrets and cash as a finished round closed"}, {FigurePosts, "posts on the public board"},
	{FigureCash, "cash"}, {FigureAgents, "agents"}, {FigureSecurity, "security"}, {FigureAP, "AP"},
	{FigureTrap, "a trap set"}, {FigureSweep, "a sweep running"}, {FigureBid, "their bid at the broker's"},
	{FigureLieLow, "their agents lying low after a theft"},
	{FigureChannel, "posts on their side's channel"}, {FigureWire, "their wire"},
	{FigureMessages, "their private messages with others"}, {FigureUnread, "their unread counts"},
}

// Figures returns every figure of the table, public ones first.
func Figures() []Figure {
	out := make([]Figure, len(figures))
	for i, f := range figures {
		out[i] = f.f
	}
	return out
}

// Disclose returns how a viewer in relation r to a player may see the
// player's figure f: the rules on information. An unknown figure is
// Hidden.
func Disclose(r Relation, f Figure) Access {
	a, ok := disclosure[f]
	if !ok || r < Self || r > Rival {
		return Hidden
	}
	return a[r]
}

// Sees reports whether viewer may see p's figure f as it stands now
// (Live): what a page or a live event may show of p to viewer.
func Sees(viewer, p *Player, f Figure) bool {
	return Disclose(Relate(viewer, p), f).Has(Live)
}

// KnownFigure returns what viewer may know of the covert figure f (cash,
// agents, security, AP, trap (1: set), sweep (the tick it runs until),
// bid or lie-low) of d.Target: the live value for the viewer's own,
// a dossier's snapshot of a rival if the viewer's side holds one (d.Known),
// and nothing (false) otherwise. It is the value to show, or to compute
// odds from, on the viewer's pages.
func KnownFigure(viewer *Player, d *Dossier, f Figure) (int, bool) {
	a := Disclose(Relate(viewer, &d.Target), f)
	var v int
	switch f {
	case FigureCash:
		v = d.Target.Cash
	case FigureAgents:
		v = d.Target.Agents
	case FigureSecurity:
		v = d.Target.Security
	case FigureAP:
		v = d.Target.AP
	case FigureTrap:
		if d.Target.Trap {
			v = 1
		}
	case FigureSweep:
		v = int(d.Target.SweepUntil)
	case FigureBid:
		v = d.Target.Bid
	case FigureLieLow:
		v = int(d.Target.LieLowUntil)
	default:
		return 0, false
	}
	if a.Has(Live) || a.Has(ByDossier) && d.Known {
		return v, true
	}
	return 0, false
}

// DisclosureTable is the table as Markdown, one row a figure and a column
// a relation (Self, Teammate, Rival), for RULES.md.
func DisclosureTable() string {
	var b strings.Builder
	b.WriteString("| what you see of an agent's | your own | on your side | on the other side |\n|---|---|---|---|")
	for _, f := range figures {
		a := disclosure[f.f]
		fmt.Fprintf(&b, "\n| %s | %s | %s | %s |", f.name, a[Self], a[Teammate], a[Rival])
	}
	return b.String()
}
