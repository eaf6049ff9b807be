// Package bots is the game's player for load tests: a loadtest.Scenario
// that plays State Secrets over HTTP as a person with a browser would. It
// enlists (or logs in, or takes a session id), keeps the live stream of
// the page it is on open as the browser's live.js does (GET /game/events,
// naming the page; a new stream for each page it views, as each page a
// browser loads opens its own), views pages with think time and gives
// orders chosen by the strategies of game/sim, so that the mix of reads,
// writes, refusals, ticks and live events is the game's own.
//
// The pace is fixed so that figures compare: while connected, a player
// views a page every PageEvery (20 s) and gives an order every OrderEvery
// (60 s) on average, each think time exponential and drawn from the user's
// seeded Rand. That is brisker than real play, so a capacity measured with
// it errs low. Step names: "register" or "login", "page" (every page view,
// the page an order redirects to included in "order"), "order" (POST
// /game and its redirect), "events" (opening a stream) and, from
// loadtest, "delivery": from one player's order to the "player" event it
// caused on each other player's stream whose page shows standings (the
// ranking, the dossiers).
package bots

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/game/sim"
	"github.com/statesecrets/server/loadtest"
)

// The pace of play (see the package comment).
const (
	PageEvery  = 20 * time.Second
	OrderEvery = 60 * time.Second
	// StreamRetry is how long a player waits before opening its stream
	// again after the server ended it: the retry the stream's hello sets
	// (3 s), as EventSource waits.
	StreamRetry = 3 * time.Second
)

// Account is how a player gets into the game: with a session id (TID,
// the fastest: no password hash), else by logging in with Name and
// Password, or, with Register, by enlisting as Name with Password in
// Faction first.
type Account struct {
	TID            string
	Name, Password string
	Faction        game.Faction
	Register       bool
}

// Config configures Scenario.
type Config struct {
	// Account returns the account of user id (loadtest.User.ID).
	Account func(id int) Account
	// PageEvery and OrderEvery are the mean think times; 0 means the
	// package's constants.
	PageEvery, OrderEvery time.Duration
	// Strategies are played in turn by user id; nil means sim.Strategies().
	Strategies []sim.Strategy
	// Pages are the pages a player views, with how often (weights); nil
	// means HQ 4 : sources 2 : dossiers 2 : ranking 1 : news 1 : board 1.
	Pages []Page
	// Orders, when set, is called after each order the server took, with
	// the user's id and the order (for tests).
	Orders func(id int, a game.Action)
}

// A Page is a game page a player views (its /game function), with how
// often (Weight, relative to the other pages').
type Page struct {
	Name   string
	Weight int
}

// pages a player views by default: HQ most, then the pages orders are
// given from.
var pages = []Page{{"hq", 4}, {"sources", 2}, {"dossiers", 2}, {"ranking", 1}, {"news", 1}, {"board", 1}}

// Scenario returns the player as a loadtest.Scenario: it plays until ctx
// ends, and returns an error only when it cannot get into the game.
func Scenario(cfg Config) loadtest.Scenario {
	if cfg.PageEvery <= 0 {
		cfg.PageEvery = PageEvery
	}
	if cfg.OrderEvery <= 0 {
		cfg.OrderEvery = OrderEvery
	}
	if cfg.Strategies == nil {
		cfg.Strategies = sim.Strategies()
	}
	if cfg.Pages == nil {
		cfg.Pages = pages
	}
	return func(ctx context.Context, u *loadtest.User) error {
		p := &player{cfg: cfg, u: u, strategy: cfg.Strategies[u.ID%len(cfg.Strategies)]}
		return p.play(ctx)
	}
}

// player is one player's state: what it has read off pages and its
// stream.
type player struct {
	cfg      Config
	u        *loadtest.User
	strategy sim.Strategy
	tid      string // "" when the session is a cookie
	csrf     string
	name     string

	mu     sync.Mutex // the stream's goroutine writes me and the clock too
	me     game.Player
	view   *sim.Game
	stream *loadtest.Stream
	page   string // the page the player is on, whose stream is open
}

func (p *player) path(page string) string {
	v := url.Values{}
	if page != "" {
		v.Set("function", page)
	}
	if p.tid != "" {
		v.Set("tid", p.tid)
	}
	if len(v) == 0 {
		return "/game"
	}
	return "/game?" + v.Encode()
}

func (p *player) play(ctx context.Context) error {
	if err := p.enter(ctx); err != nil {
		return err
	}
	p.follow(ctx, "hq")
	now := time.Now()
	nextPage := now.Add(p.u.ThinkTime(p.cfg.PageEvery))
	nextOrder := now.Add(p.u.ThinkTime(p.cfg.OrderEvery))
	for {
		next := nextPage
		if nextOrder.Before(next) {
			next = nextOrder
		}
		if err := p.u.Sleep(ctx, time.Until(next)); err != nil {
			return nil
		}
		if s := p.stream; s == nil || isDone(s) {
			if s != nil && ctx.Err() == nil {
				p.u.Error("events", fmt.Errorf("the server ended the stream: %w", s.Err()))
			}
			p.openStream(ctx)
		}
		if !nextOrder.After(nextPage) {
			p.order(ctx)
			nextOrder = time.Now().Add(p.u.ThinkTime(p.cfg.OrderEvery))
		} else {
			p.viewPage(ctx, p.pick())
			nextPage = time.Now().Add(p.u.ThinkTime(p.cfg.PageEvery))
		}
	}
}

func isDone(s *loadtest.Stream) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// pick draws a page to view.
func (p *player) pick() string {
	total := 0
	for _, pg := range p.cfg.Pages {
		total += pg.Weight
	}
	n := p.u.Rand.IntN(total)
	for _, pg := range p.cfg.Pages {
		if n < pg.Weight {
			return pg.Name
		}
		n -= pg.Weight
	}
	return "hq"
}

// enter gets the player a session and reads HQ.
func (p *player) enter(ctx context.Context) error {
	a := p.cfg.Account(p.u.ID)
	var r *loadtest.Response
	var err error
	switch {
	case a.TID != "":
		p.tid = a.TID
		r, err = p.u.Get(ctx, "page", p.path("hq"))
	case a.Register:
		r, err = p.auth(ctx, "register", url.Values{"name": {a.Name}, "password": {a.Password}, "faction": {string(a.Faction)}})
	default:
		r, err = p.auth(ctx, "login", url.Values{"name": {a.Name}, "password": {a.Password}})
	}
	if err != nil {
		return err
	}
	if r.URL.Path != "/game" {
		return fmt.Errorf("user %d: %s did not reach the game (%s, status %d)", p.u.ID, cmpOr(a.TID != "", "tid", a.Name), r.URL, r.Status)
	}
	p.csrf = r.FormValue("csrf")
	p.name, p.me.Faction = readName(r.Body)
	p.view = sim.NewView(game.World{}, nil, p.u.Rand)
	p.read("hq", r)
	return nil
}

func cmpOr(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// auth posts the login or register form, with the token its page gives.
func (p *player) auth(ctx context.Context, step string, form url.Values) (*loadtest.Response, error) {
	r, err := p.u.Get(ctx, "page", "/"+step)
	if err != nil {
		return nil, err
	}
	form.Set("csrf", r.FormValue("csrf"))
	return p.u.PostForm(ctx, step, "/"+step, form)
}

// follow opens the live stream of page, the player's page now, as a
// browser that loads a page does: the last page's stream ends, the new
// one starts afresh (a new EventSource has no Last-Event-ID).
func (p *player) follow(ctx context.Context, page string) {
	if page == "" {
		page = "hq"
	}
	if p.stream != nil {
		p.stream.Close()
		p.stream = nil
	}
	p.page = page
	p.openStream(ctx)
}

// openStream opens the live stream of the player's page as live.js does
// (view=PAGE), after StreamRetry and resuming after the last event seen
// when the server ended the last one.
func (p *player) openStream(ctx context.Context) {
	opt := loadtest.StreamOptions{OnEvent: p.onEvent}
	var kbuf []byte
	name := []byte(p.name)
	opt.Key = func(ev *loadtest.Event) []byte {
		if ev.Name != "player" {
			return nil
		}
		kbuf = playerEventKey(kbuf, ev.Data, name)
		return kbuf
	}
	if p.stream != nil && p.stream.LastID() != "" {
		opt.Header = map[string][]string{"Last-Event-Id": {p.stream.LastID()}}
	}
	if p.stream != nil {
		if err := p.u.Sleep(ctx, StreamRetry); err != nil {
			return
		}
	}
	q := url.Values{"view": {p.page}}
	if p.tid != "" {
		q.Set("tid", p.tid)
	}
	path := "/game/events?" + q.Encode()
	s, err := p.u.Stream(ctx, "events", path, opt)
	if err != nil {
		p.stream = nil
		return
	}
	p.stream = s
}

// onEvent keeps the player's own figures and the clock up to date from
// its stream (a tick's and a feed line's "me", which a tick leaves out
// when it changed nothing of them), as live.js does for the masthead; it
// runs on the stream's goroutine.
func (p *player) onEvent(ev *loadtest.Event) {
	if ev.Name != "tick" && ev.Name != "feed" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Name == "tick" {
		if n, ok := leadingInt(after(ev.Data, `"tick":`)); ok {
			p.view.World.Clock.Tick = int64(n)
		}
	}
	me := after(ev.Data, `"me":`)
	if me == nil {
		return
	}
	readFigures(me, []figure{{`"ap":`, &p.me.AP}, {`"cash":`, &p.me.Cash}, {`"agents":`, &p.me.Agents},
		{`"security":`, &p.me.Security}, {`"secrets":`, &p.me.Secrets}})
}

// viewPage views a page, reads it and follows its stream.
func (p *player) viewPage(ctx context.Context, page string) {
	r, err := p.u.Get(ctx, "page", p.path(page))
	if err == nil {
		p.read(page, r)
		p.follow(ctx, page)
	}
}

// read updates the player's state from a page it was shown.
func (p *player) read(page string, r *loadtest.Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &p.view.World
	readMasthead(r.Body, &p.me, &w.Clock)
	switch page {
	case "sources":
		w.Sources = readSources(r.Body, w.Clock.Tick)
	case "dossiers":
		theirs := game.MIB
		if p.me.Faction == game.MIB {
			theirs = game.FBI
		}
		var intel map[int64]sim.Intel
		w.Players, intel = readDossiers(r.Body, theirs)
		p.view.Intel[p.me.Faction] = intel
	}
}

// order gives the strategy's next order from what the player knows (the
// page it needs viewed first when it has never seen it), then reads the
// page the order redirects to. An order that changes the player's
// standing makes the server tell every stream: its "player" event is
// timed from the order's start at each other player's stream.
func (p *player) order(ctx context.Context) {
	if p.view.World.Sources == nil {
		p.viewPage(ctx, "sources")
	}
	if p.view.World.Players == nil {
		p.viewPage(ctx, "dossiers")
	}
	p.mu.Lock()
	me := p.me
	a, ok := p.strategy.Next(p.view, &me)
	p.mu.Unlock()
	if !ok {
		if me.AP < game.RumorAP {
			return // nothing to do until AP comes: the player only looks
		}
		a = game.Action{Kind: game.Rumor}
	}
	form := url.Values{"csrf": {p.csrf}, "function": {string(a.Kind)}}
	switch a.Kind {
	case game.Haggle:
		form.Set("source", strconv.FormatInt(a.SourceID, 10))
		form.Set("offer", strconv.Itoa(a.Offer))
		form.Set("price", strconv.Itoa(a.Price))
	case game.Spy, game.Steal:
		form.Set("target", strconv.FormatInt(a.TargetID, 10))
	case game.Bid:
		form.Set("bid", strconv.Itoa(a.Offer))
	}
	r, err := p.u.PostForm(ctx, "order", p.path(""), form)
	if err != nil {
		return
	}
	page := r.URL.Query().Get("function")
	p.read(page, r)
	p.follow(ctx, page)
	p.mu.Lock()
	now := p.me
	p.mu.Unlock()
	if now.Secrets != me.Secrets { // cash alone is private: no event
		p.u.Cause(string(figuresKey(nil, []byte(p.name), now.Secrets)), r.Start)
	}
	if p.cfg.Orders != nil && !strings.Contains(string(r.Body), `class="flash error"`) {
		p.cfg.Orders(p.u.ID, a)
	}
}
