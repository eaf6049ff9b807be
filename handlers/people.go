package handlers

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/statesecrets/server/game"
)

// renderRules renders game.RulesMarkdown to HTML once, at start-up:
// CommonMark with GitHub tables, headings given ids so that the rules'
// own links (#balance) work. The Markdown is ours, so its HTML is trusted.
func renderRules() (template.HTML, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	var b bytes.Buffer
	if err := md.Convert([]byte(game.RulesMarkdown), &b); err != nil {
		return "", fmt.Errorf("handlers: rules: %w", err)
	}
	return template.HTML(b.String()), nil //nolint:gosec // our own Markdown, rendered
}

// handleRules shows the rules to anyone, logged in or not, in the page
// layout with the player's nav when there is one.
func (s *Server) handleRules(w http.ResponseWriter, r *http.Request) {
	v, _ := s.findViewer(r) // nil, logged out: the rules without the game's nav
	vw := s.newView(v, "rules", "Rules")
	vw.Data = s.rules
	s.render(w, http.StatusOK, "rules", vw)
}

type feedData struct{ Events []game.Event }

// loadFeed shows the player's whole wire: every line kept (game.KeepFeed).
func (s *Server) loadFeed(ctx context.Context, v *viewer, _ url.Values) (any, error) {
	events, err := s.store.Events(ctx, v.player.ID, game.KeepFeed)
	return feedData{events}, err
}

type hallData struct{ Rounds []game.RoundResult }

func (s *Server) loadHall(ctx context.Context, v *viewer, _ url.Values) (any, error) {
	rounds, err := s.store.HallOfFame(ctx)
	return hallData{rounds}, err
}

type profileData struct {
	Clock   game.Clock
	Profile *game.Profile
}

// loadProfile shows the player the query's name names.
func (s *Server) loadProfile(ctx context.Context, v *viewer, q url.Values) (any, error) {
	name := q.Get("name")
	if strings.TrimSpace(name) == "" {
		return nil, game.Errorf(game.EINVALID, `Say whose profile to show: name=AGENT.`)
	}
	clock, err := s.store.Clock(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := s.store.Profile(ctx, truncate(name, 40))
	return profileData{clock, pr}, err
}
