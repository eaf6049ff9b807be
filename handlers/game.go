package handlers

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/statesecrets/server/assets/templates"
	"github.com/statesecrets/server/game"
)

// How many lines of the player's feed headquarters shows.
const hqEvents = 15

// gamePage is one page of /game?function=NAME: its title and what it
// loads from the store, the page's data.
type gamePage struct {
	title string
	load  func(s *Server, ctx context.Context, v *viewer, q url.Values) (templates.Page, error)
}

var gamePages = map[string]gamePage{
	"hq":       {"Headquarters", (*Server).loadHQ},
	"sources":  {"Sources", (*Server).loadSources},
	"dossiers": {"Dossiers", (*Server).loadDossiers},
	"ranking":  {"Ranking", (*Server).loadRanking},
	"news":     {"News", (*Server).loadNews},
	"board":    {"Board", (*Server).loadBoard},
	"feed":     {"Your wire", (*Server).loadFeed},
	"hall":     {"Hall of fame", (*Server).loadHall},
	"profile":  {"Profile", (*Server).loadProfile},
	"reports":  {"Reports", (*Server).loadReports},
	"messages": {"Messages", (*Server).loadMessages},
}

// handleGamePage renders /game?function=NAME (hq when absent) for the
// viewer, with the flash of the action that led here, if any. An unknown
// NAME is 404. The long lists (dossiers, ranking, news, board) show
// game.PageSize rows, page=N (from 1) choosing which.
func (s *Server) handleGamePage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	q := r.URL.Query()
	fn := q.Get("function")
	if fn == "" {
		fn = "hq"
	}
	page, ok := gamePages[fn]
	if !ok {
		return game.Errorf(game.ENOTFOUND, "There is no page called %q here; the tabs above list them all.", truncate(fn, 40))
	}
	data, err := page.load(s, storeContext(r), v, q)
	if err != nil {
		return err
	}
	vw := s.newView(v, fn, page.title)
	vw.Flash = s.takeFlash(w, r, v.sid)
	s.render(w, r, http.StatusOK, vw, data)
	return nil
}

// pageNumber reads the query's page=N, from 1; 1 when absent. Past the last
// page, the store shows the last.
func pageNumber(q url.Values) (int, error) {
	v := q.Get("page")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, game.Errorf(game.EINVALID, "The page must be a whole number from 1, not %q.", truncate(v, 40))
	}
	return n, nil
}

// truncate cuts s to at most n bytes on a rune boundary, for echoing
// input back.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (s *Server) loadHQ(ctx context.Context, v *viewer, _ url.Values) (templates.Page, error) {
	digest, err := s.store.Visit(ctx, v.player, v.clock)
	if err != nil {
		return nil, err
	}
	events, err := s.store.Events(ctx, v.player.ID, hqEvents)
	return templates.HQ{Clock: v.clock, Events: events, Digest: digest}, err
}

// loadSources lists the sources cheapest first (the store's slice is the
// cache's: sorted as a copy), with the broker's last auction.
func (s *Server) loadSources(ctx context.Context, v *viewer, _ url.Values) (templates.Page, error) {
	sources, err := s.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	sources = slices.Clone(sources)
	slices.SortStableFunc(sources, func(a, b game.Source) int { return cmp.Compare(a.Price, b.Price) })
	last, err := s.store.LastAuction(ctx)
	return templates.Sources{Clock: v.clock, Sources: sources, LastAuction: last}, err
}

func (s *Server) loadDossiers(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	n, err := pageNumber(q)
	if err != nil {
		return nil, err
	}
	p, err := s.store.DossiersPage(ctx, v.player.ID, n)
	if err != nil {
		return nil, err
	}
	players, err := s.store.Players(ctx)
	if err != nil {
		return nil, err
	}
	sources, err := s.store.Sources(ctx)
	return templates.Dossiers{Page: p, Protected: v.player.Protected(v.clock.Tick), Cheapest: game.Cheapest(sources, v.clock.Tick),
		Players: players}, err
}

func (s *Server) loadRanking(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	n, err := pageNumber(q)
	if err != nil {
		return nil, err
	}
	p, totals, err := s.store.RankingPage(ctx, n)
	if err != nil {
		return nil, err
	}
	first := 1
	if len(p.Rows) > 0 && p.Number > 1 {
		if first, err = s.store.Place(ctx, p.Rows[0].Secrets); err != nil {
			return nil, err
		}
	}
	lead, _ := (&game.Ranking{Factions: totals}).Winner()
	return templates.Ranking{Clock: v.clock, Page: p, Places: game.SharedPlaces(first, p.Rows), Factions: totals, Leader: lead}, nil
}

func (s *Server) loadNews(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	n, err := pageNumber(q)
	if err != nil {
		return nil, err
	}
	p, err := s.store.NewsPage(ctx, n)
	return templates.News{Page: p}, err
}

func (s *Server) loadBoard(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	n, err := pageNumber(q)
	if err != nil {
		return nil, err
	}
	p, err := s.store.PostsPage(ctx, v.player.Faction, n)
	if err == nil {
		err = s.store.SeenFaction(ctx, v.player) // the faction channel is read
	}
	return templates.Board{Page: p}, err
}

func (s *Server) loadReports(ctx context.Context, v *viewer, _ url.Values) (templates.Page, error) {
	rs, err := s.store.Reports(ctx, v.player.ID, game.KeepReports)
	return templates.Reports{Reports: rs}, err
}

// loadMessages is the inbox, or with=NAME the conversation with that
// player (marking it read).
func (s *Server) loadMessages(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	if with := q.Get("with"); with != "" {
		other, thread, err := s.store.Thread(ctx, v.player.ID, truncate(with, 40))
		if err != nil {
			return nil, err
		}
		if v.player.UnreadMessages > 0 { // the masthead counts what this page just read
			if p, err := s.store.Player(ctx, v.player.ID); err == nil {
				v.player.UnreadMessages = p.UnreadMessages
			}
		}
		return templates.Messages{With: &other, Thread: thread}, nil
	}
	inbox, err := s.store.Inbox(ctx, v.player.ID)
	return templates.Messages{Inbox: inbox}, err
}
