package handlers

import (
	"net/http"

	"github.com/statesecrets/server/assets/templates"
)

// An action's outcome travels to the page the action redirects to in a
// flash cookie: signed and encrypted like the session cookie, bound to the
// session, alive for a minute and deleted by the first page that shows it.
// A refused action is a flash too (Error set), on the page the action came
// from: the POST always ends in 303 See Other, so a reload sends a GET.
// So the outcome shows once, and a page requested without it (ab, a
// reload) is byte-identical to the last one while the game does not change.
//
// A player who plays by tid, without cookies (the State Secrets URL
// style), gets the same sealed value in the redirect's URL instead, as the
// query parameter flash: the page shows it while it is fresh (a minute),
// and the page's own links do not carry it on.
const flashParam = "flash"
const (
	flashCookie = "ss_flash"
	flashMaxAge = 60 // seconds
)

// flash is one message for the next page: what an action did, or why it
// was refused (Error), with what the form held so that a refused board
// post can be sent again without retyping it.
type flash struct {
	Text  string
	Error bool   // a refusal: nothing was done
	Body  string // a refused post's text, for the board's form
	// FactionOnly is whether the refused post was for the faction channel.
	FactionOnly bool
	To          string // a refused private message's recipient, as typed
	SID         string // the session it is for: another login on the browser does not see it
}

// setFlash queues f for the next page of the session f.SID and returns its
// sealed value (for a tid URL; "" if it could not be sealed). A flash too
// long for a cookie loses its Body first: the outcome still shows.
func (s *Server) setFlash(w http.ResponseWriter, r *http.Request, f flash) string {
	value, err := s.flashes.Encode(flashCookie, f)
	if err != nil && f.Body != "" {
		f.Body = ""
		value, err = s.flashes.Encode(flashCookie, f)
	}
	if err != nil {
		// A broken key: the action is done anyway and its outcome is
		// also in the player's feed.
		s.log.Warn("flash", "err", err)
		return ""
	}
	c := s.cookie(r, flashCookie, value)
	c.MaxAge = flashMaxAge
	http.SetCookie(w, c)
	return value
}

// takeFlash returns the flash queued for the session sid, if any, and
// deletes it from the browser; the zero Flash for none.
func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request, sid string) templates.Flash {
	var value string
	if c, err := r.Cookie(flashCookie); err == nil {
		s.clearCookie(w, r, flashCookie)
		value = c.Value
	} else if value = r.URL.Query().Get(flashParam); value == "" {
		return templates.Flash{}
	}
	var f flash
	if s.flashes.Decode(flashCookie, value, &f) != nil || f.SID != sid {
		return templates.Flash{}
	}
	return templates.Flash{Text: f.Text, Error: f.Error, Body: f.Body, FactionOnly: f.FactionOnly, To: f.To}
}
