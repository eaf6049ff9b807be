package handlers

import "github.com/statesecrets/server/assets/templates"

// newView returns the view of a page titled title; v may be nil (no
// session). The flash is the caller's to set.
func (s *Server) newView(v *viewer, function, title string) *templates.View {
	if v == nil {
		return &templates.View{Title: title, Function: function}
	}
	p := v.view()
	p.Title, p.Function, p.CSRF = title, function, s.csrfToken(v.sid)
	return p
}

// view returns the viewer's part of a view: the player, and the tid its
// links carry on (for a redirect's URL, say).
func (v *viewer) view() *templates.View {
	p := &templates.View{Player: v.player, Clock: v.clock}
	if v.viaTID {
		p.TID = v.sid
	}
	return p
}
