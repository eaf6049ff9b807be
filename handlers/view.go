package handlers

import "github.com/statesecrets/server/assets/templates"

// newView returns the view of a page titled title; v may be nil (no
// session). The flash is the caller's to set.
func (s *Server) newView(v *viewer, function, title string) *templates.View {
	p := &templates.View{Title: title, Function: function}
	if v != nil {
		p.Player = v.player
		p.CSRF = s.csrfToken(v.sid)
		if v.viaTID {
			p.TID = v.sid
		}
	}
	return p
}
