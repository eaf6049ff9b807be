package handlers

import "net/http"

// registerRoutes wires every route into mux. GET patterns answer HEAD too.
// A method a path does not allow gets 405 with an Allow header from the
// mux; a GET of a path no route matches gets the rendered 404 page. Each
// pattern is also the route label of the request durations (routemetrics.go).
func (s *Server) registerRoutes(mux *routes) {
	mux.HandleFunc("GET /{$}", s.handleStatic)
	mux.HandleFunc("GET /static/", s.handleStatic)
	mux.HandleFunc("GET /favicon.ico", s.handleStatic)

	mux.HandleFunc("GET /login", s.handleLoginForm)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("GET /register", s.handleRegisterForm)
	mux.HandleFunc("POST /register", s.handleRegister)
	mux.HandleFunc("GET /logout", s.withViewer(s.handleLogoutForm))
	mux.HandleFunc("POST /logout", s.withViewer(s.handleLogout))

	mux.HandleFunc("GET /rules", s.handleRules)
	mux.HandleFunc("GET /game", s.withViewer(s.handleGamePage))
	mux.HandleFunc("POST /game", s.withViewer(s.handleAction))
	mux.HandleFunc("GET /game/events", s.handleEvents)

	mux.HandleFunc("GET /", s.handleNotFound)
}

// handleNotFound answers any path no other route matches.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.Error(w, r, errNotFoundPage)
}
