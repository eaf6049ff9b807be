package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/statesecrets/server/assets/templates"
	"github.com/statesecrets/server/game"
)

// renderRules renders game.RulesMarkdown to HTML once, at start-up:
// CommonMark with GitHub tables, headings given ids so that the rules'
// own links (#balance) work. The Markdown is the game's own, never a
// player's, so its HTML is written as it is.
func renderRules() (templ.Component, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	var b bytes.Buffer
	if err := md.Convert([]byte(game.RulesMarkdown), &b); err != nil {
		return nil, fmt.Errorf("handlers: rules: %w", err)
	}
	html := b.Bytes()
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := w.Write(html)
		return err
	}), nil
}

// handleRules shows the rules to anyone, logged in or not, in the page
// layout with the player's nav when there is one.
func (s *Server) handleRules(w http.ResponseWriter, r *http.Request) {
	v, _ := s.findViewer(r) // nil, logged out: the rules without the game's nav
	clock, err := s.store.Clock(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, s.newView(v, "rules", "Rules"), templates.Rules{HTML: s.rules, Clock: clock})
}

// loadFeed shows the player's whole wire: every line kept (game.KeepFeed,
// and the alerts of messages, up to game.WireLines in all).
func (s *Server) loadFeed(ctx context.Context, v *viewer, _ url.Values) (templates.Page, error) {
	events, err := s.store.Events(ctx, v.player.ID, game.WireLines)
	return templates.Feed{Events: events}, err
}

func (s *Server) loadHall(ctx context.Context, v *viewer, _ url.Values) (templates.Page, error) {
	rounds, err := s.store.HallOfFame(ctx)
	if err != nil {
		return nil, err
	}
	careers, err := s.store.Careers(ctx, game.HallCareers)
	return templates.Hall{Rounds: rounds, Careers: careers}, err
}

// loadProfile shows the player the query's name names.
func (s *Server) loadProfile(ctx context.Context, v *viewer, q url.Values) (templates.Page, error) {
	name := q.Get("name")
	if strings.TrimSpace(name) == "" {
		return nil, game.Errorf(game.EINVALID, `Say whose profile to show: name=AGENT.`)
	}
	pr, err := s.store.Profile(ctx, truncate(name, 40))
	if err != nil {
		return nil, err
	}
	return templates.Profile{Profile: pr}, nil
}
