package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/statesecrets/server/game"
)

// actionPages maps each action to the page its form is on: where it
// redirects afterwards, and where a refusal's back button points.
var actionPages = map[game.ActionKind]string{
	game.Recruit: "hq", game.Fortify: "hq", game.Rumor: "hq",
	game.Haggle: "sources",
	game.Spy:    "dossiers", game.Steal: "dossiers",
	game.PostMessage: "board",
}

// handleAction performs the action a POST /game form names in its field
// "function", after the CSRF check, and redirects with 303 See Other to
// the action's page, where the outcome shows once (flash.go). A malformed
// field is 400 naming it; a refusal by the rules (not enough AP, a
// protected target...) is the status of its error code, with the rules'
// message. Either way nothing changes.
func (s *Server) handleAction(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := s.checkCSRF(r, v.sid); err != nil {
		return err
	}
	a, err := parseAction(r.PostForm)
	if err != nil {
		return err
	}
	out, err := s.store.Act(r.Context(), v.player.ID, a)
	if err != nil {
		return err
	}
	s.pollLive(r.Context()) // the action's changes reach open streams at once
	s.setFlash(w, r, v.sid, out.Text)
	http.Redirect(w, r, v.view().Href(actionPages[a.Kind]), http.StatusSeeOther)
	return nil
}

// parseAction reads a game.Action from an action form. It checks the
// form's syntax, naming the field at fault; the rules check the values.
func parseAction(form url.Values) (game.Action, error) {
	a := game.Action{Kind: game.ActionKind(form.Get("function"))}
	var err error
	switch a.Kind {
	case game.Recruit, game.Fortify, game.Rumor:
	case game.Haggle:
		if a.SourceID, err = formID(form, "source"); err == nil {
			a.Offer, err = formDollars(form, "offer")
		}
		if err == nil {
			// The asking price the page showed: the rules refuse the offer
			// if it has moved, rather than turn it into another gamble.
			a.Price, err = formDollars(form, "price")
		}
	case game.Spy, game.Steal:
		a.TargetID, err = formID(form, "target")
	case game.PostMessage:
		a.Body = form.Get("body")
		a.FactionOnly = form.Get("channel") == "faction" // absent or "public": everyone reads it
	case "":
		err = game.Errorf(game.EINVALID, `The field "function" is missing: it names the action to take.`)
	default:
		err = game.Errorf(game.ENOTFOUND, "There is no action called %q.", truncate(string(a.Kind), 40))
	}
	return a, err
}

// formID reads the field name as the id of a source or player.
func formID(form url.Values, name string) (int64, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return 0, game.Errorf(game.EINVALID, "The field %q is missing.", name)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, game.Errorf(game.EINVALID, "The field %q must be an id (a positive whole number), not %q.", name, truncate(v, 40))
	}
	return id, nil
}

// formDollars reads the field name as a whole number of dollars.
func formDollars(form url.Values, name string) (int, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return 0, game.Errorf(game.EINVALID, "The field %q is missing: say how many dollars.", name)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "$"))
	if err != nil || n <= 0 {
		return 0, game.Errorf(game.EINVALID, "The field %q must be a whole number of dollars above 0, not %q.", name, truncate(v, 40))
	}
	return n, nil
}
