package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/statesecrets/server/assets/templates"
	"github.com/statesecrets/server/game"
)

// statusError is a refusal that is about HTTP rather than the game (a forged
// form, a body too large), with a message safe to show.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return "handlers: " + e.message }

var (
	errForbiddenCSRF = &statusError{http.StatusForbidden,
		"This form's security token is missing or wrong, so nothing was done. Reload the page and try again."}
	errFormTooLarge = &statusError{http.StatusRequestEntityTooLarge,
		"The form is too large; nothing was done."}
	errCrossOrigin = &statusError{http.StatusForbidden,
		"The form came from another site, so nothing was done."}
	errNotFoundPage = game.Errorf(game.ENOTFOUND, "There is no such page.")
)

// statusCode returns the HTTP status for err. It is the one place where
// game error codes become statuses: EINVALID 400, ENOTFOUND 404, ECONFLICT
// 409, EUNAUTHORIZED 401, anything else (EINTERNAL, errors that are not
// *game.Error) 500. HTTP-level refusals made here (403 for a bad CSRF token,
// 413 for a huge form, 415 for a body that is not a URL-encoded form, 429 over the login limit) keep their own status.
func statusCode(err error) int {
	if se := (*statusError)(nil); errors.As(err, &se) {
		return se.status
	}
	switch game.ErrorCode(err) {
	case "":
		return http.StatusOK
	case game.EINVALID:
		return http.StatusBadRequest
	case game.ENOTFOUND:
		return http.StatusNotFound
	case game.ECONFLICT:
		return http.StatusConflict
	case game.EUNAUTHORIZED:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// userMessage returns what the page may say about err.
func userMessage(err error) string {
	if se := (*statusError)(nil); errors.As(err, &se) {
		return se.message
	}
	return game.ErrorMessage(err)
}

// Error answers r with the page for err. An unauthorized request (no,
// expired or revoked session) is redirected to /login with 303 See Other
// instead. A 500 logs the real error and shows only "Internal error.". The
// page keeps the nav of the player, if the request had one.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	status := statusCode(err)
	if status == http.StatusUnauthorized {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	if status == http.StatusInternalServerError {
		// The path only: the query may hold a tid, a bearer credential.
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	v := s.newView(viewerFrom(r), "", "")
	page := newErrorPage(v, status, userMessage(err), backPage(r))
	v.Title = page.Title
	s.render(w, r, status, v, page)
}

// errorTitles head the error page, in the game's voice.
var errorTitles = map[int]string{
	http.StatusBadRequest:            "Request denied",
	http.StatusForbidden:             "Access denied",
	http.StatusNotFound:              "No such file",
	http.StatusConflict:              "Already on file",
	http.StatusRequestEntityTooLarge: "Too much paper",
	http.StatusUnsupportedMediaType:  "Wrong form",
	http.StatusInternalServerError:   "Something broke at headquarters",
}

// newErrorPage points the page's button where the player most likely wants
// to go: the game page back (for a player), the front page outside the game.
func newErrorPage(v *templates.View, status int, message, back string) templates.Error {
	p := templates.Error{Status: status, Title: errorTitles[status], Message: message, Back: "/", BackLabel: "Front page"}
	if p.Title == "" {
		p.Title = http.StatusText(status)
	}
	if v.Player != nil {
		p.Back, p.BackLabel = v.Href(back), "Back to "+strings.ToLower(gamePages[back].title)
	}
	return p
}

// backPage returns the game page a refused request came from: the page of
// the action a POST /game named, else headquarters.
func backPage(r *http.Request) string {
	if r.Method == http.MethodPost && r.PostForm != nil {
		if page, ok := actionPages[game.ActionKind(r.PostForm.Get("function"))]; ok {
			return page
		}
	}
	return "hq"
}
