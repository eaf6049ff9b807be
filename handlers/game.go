package handlers

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/statesecrets/server/game"
)

// How many lines of a feed a page shows.
const (
	hqEvents   = 15
	newsEvents = 40
	boardPosts = 40
)

// gamePage is one page of /game?function=NAME: its title and what it
// loads from the store for the template NAME.html.
type gamePage struct {
	title string
	load  func(s *Server, ctx context.Context, v *viewer) (any, error)
}

var gamePages = map[string]gamePage{
	"hq":       {"Headquarters", (*Server).loadHQ},
	"sources":  {"Sources", (*Server).loadSources},
	"dossiers": {"Dossiers", (*Server).loadDossiers},
	"ranking":  {"Ranking", (*Server).loadRanking},
	"news":     {"News", (*Server).loadNews},
	"board":    {"Board", (*Server).loadBoard},
}

// handleGamePage renders /game?function=NAME (hq when absent) for the
// viewer, with the flash of the action that led here, if any. An unknown
// NAME is 404.
func (s *Server) handleGamePage(w http.ResponseWriter, r *http.Request, v *viewer) error {
	fn := r.URL.Query().Get("function")
	if fn == "" {
		fn = "hq"
	}
	page, ok := gamePages[fn]
	if !ok {
		return game.Errorf(game.ENOTFOUND, "There is no page called %q here; the tabs above list them all.", truncate(fn, 40))
	}
	data, err := page.load(s, r.Context(), v)
	if err != nil {
		return err
	}
	vw := s.newView(v, fn, page.title)
	vw.Flash = s.takeFlash(w, r, v.sid)
	vw.Data = data
	s.render(w, http.StatusOK, fn, vw)
	return nil
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

type hqData struct {
	Clock  game.Clock
	Events []game.Event
}

func (s *Server) loadHQ(ctx context.Context, v *viewer) (any, error) {
	clock, err := s.store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	events, err := s.store.Events(ctx, v.player.ID, hqEvents)
	return hqData{clock, events}, err
}

type sourcesData struct {
	Clock   game.Clock
	Sources []game.Source
}

func (s *Server) loadSources(ctx context.Context, v *viewer) (any, error) {
	clock, err := s.store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	sources, err := s.store.Sources(ctx)
	return sourcesData{clock, sources}, err
}

type dossiersData struct{ Dossiers []game.Dossier }

func (s *Server) loadDossiers(ctx context.Context, v *viewer) (any, error) {
	d, err := s.store.Dossiers(ctx, v.player.ID)
	return dossiersData{d}, err
}

type rankingData struct {
	Clock   game.Clock
	Ranking *game.Ranking
	Leader  game.Faction // by Secrets per player; "" when level
}

func (s *Server) loadRanking(ctx context.Context, v *viewer) (any, error) {
	clock, err := s.store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	rk, err := s.store.Ranking(ctx)
	if err != nil {
		return nil, err
	}
	lead, _ := rk.Winner()
	return rankingData{clock, rk, lead}, nil
}

type newsData struct{ News []game.Event }

func (s *Server) loadNews(ctx context.Context, v *viewer) (any, error) {
	news, err := s.store.News(ctx, newsEvents)
	return newsData{news}, err
}

type boardData struct{ Posts []game.Post }

func (s *Server) loadBoard(ctx context.Context, v *viewer) (any, error) {
	posts, err := s.store.Posts(ctx, v.player.Faction, boardPosts)
	return boardData{posts}, err
}
