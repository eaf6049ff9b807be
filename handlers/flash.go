package handlers

import "net/http"

// An action's outcome travels to the page the action redirects to in a
// flash cookie: signed and encrypted like the session cookie, bound to the
// session, alive for a minute and deleted by the first page that shows it.
// So the outcome shows once, and a page requested without it (ab, a
// reload) is byte-identical to the last one while the game does not change.
const (
	flashCookie = "ss_flash"
	flashMaxAge = 60 // seconds
)

// flash is one message for the next page. A refused action gets an error
// page instead (see Error), so a flash always tells what happened.
type flash struct {
	Text string
	SID  string // the session it is for: another login on the browser does not see it
}

// setFlash queues text for the next page of the session sid.
func (s *Server) setFlash(w http.ResponseWriter, r *http.Request, sid, text string) {
	value, err := s.flashes.Encode(flashCookie, flash{Text: text, SID: sid})
	if err != nil {
		// Too long for a cookie, or a broken key: the action is done anyway
		// and its outcome is also in the player's feed.
		s.log.Warn("flash", "err", err)
		return
	}
	c := s.cookie(r, flashCookie, value)
	c.MaxAge = flashMaxAge
	http.SetCookie(w, c)
}

// takeFlash returns the flash queued for the session sid, if any, and
// deletes it from the browser; "" for none.
func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request, sid string) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	s.clearCookie(w, r, flashCookie)
	var f flash
	if s.flashes.Decode(flashCookie, c.Value, &f) != nil || f.SID != sid {
		return ""
	}
	return f.Text
}
