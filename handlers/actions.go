package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/statesecrets/server/game"
)

// actionPages maps each action to the page its form is on: where it
// redirects afterwards, and where a refusal's back button points.
var actionPages = map[game.ActionKind]string{
	game.Recruit: "hq", game.Fortify: "hq", game.Rumor: "hq",
	game.Haggle: "sources", game.Bid: "sources",
	game.Trap: "hq", game.Sweep: "hq",
	game.Spy: "dossiers", game.Steal: "dossiers",
	game.PostMessage: "board",
	game.Message:     "messages",
}

// handleAction performs the action a POST /game form names in its field
// "function", after the CSRF check, and redirects with 303 See Other to
// the action's page (page=N of a long list when the form says so), where
// the outcome shows once (flash.go). A refusal (a
// malformed field, or the rules: not enough AP, a protected target, no
// such target...) redirects there too, its message shown as an error
// flash and a refused post's text back in the form; nothing changes. So a
// reload after any action sends a GET. A bad CSRF token (403), an unknown
// action (400, naming it: /game exists, the action does not) and internal
// errors (500) get the error page.
func (s *Server) handleAction(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := s.checkCSRF(r, v.sid); err != nil {
		return err
	}
	a, err := parseAction(r.PostForm)
	page, known := actionPages[a.Kind]
	if !known {
		return err
	}
	f := flash{SID: v.sid}
	if err == nil {
		var out game.Outcome
		out, err = s.store.Act(storeContext(r), v.player.ID, a)
		f.Text = out.Text
	}
	switch {
	case err == nil:
		s.pollLive(storeContext(r)) // the action's changes reach open streams at once
	case statusCode(err) == http.StatusInternalServerError:
		return err
	default:
		f.Text, f.Error = userMessage(err), true
		if a.Kind == game.PostMessage {
			f.Body, f.FactionOnly = a.Body, a.FactionOnly
		}
		if a.Kind == game.Message {
			f.Body, f.To = a.Body, a.To
		}
	}
	sealed := s.setFlash(w, r, f)
	back := v.view().Href(page)
	if a.Kind == game.Message && err == nil {
		back = v.view().Thread(a.To) // the conversation, with the message in it
	}
	if n, err := pageNumber(url.Values{"page": {r.PostForm.Get("page")}}); err == nil && n > 1 {
		back = v.view().PageHref(page, n) // the page of a long list the form was on
	}
	if v.viaTID && sealed != "" {
		back += "&" + flashParam + "=" + url.QueryEscape(sealed) // no cookies needed
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
	return nil
}

// parseAction reads a game.Action from an action form. It checks the
// form's syntax, naming the field at fault; the rules check the values.
func parseAction(form url.Values) (game.Action, error) {
	a := game.Action{Kind: game.ActionKind(form.Get("function"))}
	var err error
	switch a.Kind {
	case game.Recruit, game.Fortify, game.Rumor:
		a.Count, err = formCount(form)
	case game.Trap, game.Sweep:
	case game.Bid:
		// 0 withdraws the bid; the rules check the least bid and the cash.
		a.Offer, err = formWhole(form, "bid")
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
	case game.Message:
		a.To, a.Body = strings.TrimSpace(form.Get("to")), form.Get("body")
		if a.To == "" {
			err = game.Errorf(game.EINVALID, "The field %q is missing: say whom the message is for.", "to")
		} else {
			err = formText(a.Body, "body")
		}
	case game.PostMessage:
		a.Body = form.Get("body")
		err = formText(a.Body, "body")
		a.FactionOnly = form.Get("channel") == "faction" // absent or "public": everyone reads it
	case "":
		err = game.Errorf(game.EINVALID, `The field "function" is missing: it names the action to take.`)
	default:
		// 400, not 404: /game exists; the form names an action it has not
		// (RFC 9110 15.5.1).
		err = game.Errorf(game.EINVALID, "There is no action called %q: the field \"function\" names the action to take.",
			truncate(string(a.Kind), 40))
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

// formCount reads the optional field "count", how many times to give a
// batchable order: 1 when absent or empty; the rules check the range.
func formCount(form url.Values) (int, error) {
	v := strings.TrimSpace(form.Get("count"))
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, game.Errorf(game.EINVALID, "The field %q must be a whole number of orders, 1 to %d, not %q.", "count", game.MaxBatch, truncate(v, 40))
	}
	return n, nil
}

// formWhole reads the field name as a whole number of dollars, 0 or more.
func formWhole(form url.Values, name string) (int, error) {
	v := strings.TrimSpace(form.Get(name))
	if v == "" {
		return 0, game.Errorf(game.EINVALID, "The field %q is missing: say how many dollars (0 withdraws).", name)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, "$"))
	if err != nil || n < 0 {
		return 0, game.Errorf(game.EINVALID, "The field %q must be a whole number of dollars, 0 or more, not %q.", name, truncate(v, 40))
	}
	return n, nil
}

// formText checks the text of field name (a message, a post): UTF-8
// without control characters other than tab, line feed and carriage
// return, which a text area sends; a page would otherwise show the bytes
// raw to the players who read it.
func formText(s, name string) error {
	if !utf8.ValidString(s) {
		return game.Errorf(game.EINVALID, "The field %q must be text (UTF-8); it holds bytes that are not.", name)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return game.Errorf(game.EINVALID, "The field %q holds a control character (%U): send plain text.", name, r)
		}
	}
	return nil
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
