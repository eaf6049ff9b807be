package handlers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/statesecrets/server/assets/templates"
	"github.com/statesecrets/server/game"
)

// MaxFormBytes bounds a form body, in bytes: larger ones are refused with
// 413. The largest legitimate form, a board post of game.MaxPostRunes runes,
// percent-encoded, is under 20 KiB. No request to these handlers needs a
// larger body, so a server hosting them can set its own body limit (such as
// gameserver.Config.MaxBodyBytes) to this and refuse more before reading it.
const MaxFormBytes = 64 << 10

// parseForm parses r's URL-encoded form body, at most MaxFormBytes. A body
// of any other media type (a multipart form, JSON) is refused with 415
// naming it, rather than read as an empty form.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	if err := checkFormType(r); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return errFormTooLarge
		}
		return game.Errorf(game.EINVALID, "The form could not be read; send it as application/x-www-form-urlencoded.")
	}
	return nil
}

// checkFormType returns a 415 statusError unless r has no body or its
// Content-Type is application/x-www-form-urlencoded (RFC 9110 section
// 15.5.16), the only form encoding these handlers read. A body of unknown
// length (chunked) that turns out empty is no body, as Content-Length: 0
// is: checkFormType reads at most one byte of it to tell.
func checkFormType(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/x-www-form-urlencoded" {
		return nil
	}
	if r.ContentLength < 0 && emptyBody(r) {
		return nil
	}
	sent := "a body without a Content-Type"
	switch {
	case err == nil:
		sent = mt
	case ct != "":
		sent = "Content-Type " + strconv.Quote(ct)
	}
	return &statusError{http.StatusUnsupportedMediaType,
		"The form must be sent as application/x-www-form-urlencoded, not as " + sent + "; nothing was done."}
}

// emptyBody reports whether r's body of unknown length is empty, reading
// at most one byte of it (and leaving r.Body to read from that byte on).
func emptyBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	var b [1]byte
	n, err := io.ReadFull(r.Body, b[:])
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return true
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b[:n]), r.Body), r.Body}
	return false
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	s.renderAuth(w, r, http.StatusOK, "login", templates.AuthForm{})
}

func (s *Server) handleRegisterForm(w http.ResponseWriter, r *http.Request) {
	s.renderAuth(w, r, http.StatusOK, "register", templates.AuthForm{})
}

// renderAuth renders the login or register page with the browser's form
// token (see csrf.go).
func (s *Server) renderAuth(w http.ResponseWriter, r *http.Request, status int, page string, form templates.AuthForm) {
	token, err := s.formToken(w, r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	title, data := "Log in", templates.Page(templates.Login(form))
	if page == "register" {
		title, data = "Enlist", templates.Register(form)
	}
	v := s.newView(nil, page, title)
	v.CSRF = token
	s.render(w, r, status, v, data)
}

// refuseAuth re-renders the login or register form with the reason err
// refused it, and the status Error would give, except that wrong credentials
// are 403 Forbidden: a 401 must carry WWW-Authenticate (RFC 9110 section
// 15.5.2), which a form login has no scheme for, and 403 is the status for
// credentials provided but insufficient (section 15.5.4). Internal errors get
// the error page.
func (s *Server) refuseAuth(w http.ResponseWriter, r *http.Request, page string, form templates.AuthForm, err error) {
	status := statusCode(err)
	switch status {
	case http.StatusInternalServerError:
		s.Error(w, r, err)
		return
	case http.StatusUnauthorized:
		status = http.StatusForbidden
	}
	form.Error = userMessage(err)
	s.renderAuth(w, r, status, page, form)
}

// handleLogin checks a name and password and starts a session: the
// player is looked up on the loop, the bcrypt comparison (about 70 ms of
// CPU) runs on the engine's worker pool (gameserver.Go) when the fair
// queue gives the client its turn (loginqueue.go), and the session is
// started back on the loop, so other clients are served meanwhile.
// Wrong ones: 403 and the form again, the failure counted by the
// throttle (throttle.go). A client over the attempt limit, an attempt the
// throttle holds back, or a client over the queue's bounds: 429 (503 for
// a full queue) with Retry-After and the form again, checking nothing.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := s.checkAuthForm(w, r); err != nil {
		s.Error(w, r, err)
		return
	}
	name := r.PostFormValue("name")
	form := templates.AuthForm{Name: name}
	if err := s.checkAuthLimit(w, r); err != nil {
		s.refuseAuth(w, r, "login", form, err)
		return
	}
	attempt := s.loginAttempt(r, name)
	if _, err := s.checkThrottle(w, r, attempt); err != nil {
		s.refuseAuth(w, r, "login", form, err)
		return
	}
	login, err := s.store.LookupLogin(r.Context(), name)
	if err != nil {
		s.refuseAuth(w, r, "login", form, err)
		return
	}
	password := r.PostFormValue("password")
	s.hashTurn(w, r, "login", form, func(w http.ResponseWriter, r *http.Request) {
		// Again: failures may have come in while this one waited its turn.
		known, err := s.checkThrottle(w, r, attempt)
		if err != nil {
			s.refuseAuth(w, r, "login", form, err)
			return
		}
		offLoop(s, w, r, func(context.Context) checked[*game.Player] {
			p, err := login.Check(password) // bcrypt, on a worker: no store, no loop state
			return checked[*game.Player]{p, err}
		}, func(w http.ResponseWriter, r *http.Request, c checked[*game.Player]) {
			if c.err != nil {
				s.loginFailed(r, attempt, known, c.err)
				s.refuseAuth(w, r, "login", form, c.err)
				return
			}
			s.loginSucceeded(w, r, c.v.ID, attempt)
			s.startSession(w, r, c.v.ID)
		})
	})
}

// hashTurn runs start, which hands a password hash to the worker pool,
// when the fair queue gives r's client its turn (loginqueue.go); a
// refusal of the queue re-renders page's form with form's values.
func (s *Server) hashTurn(w http.ResponseWriter, r *http.Request, page string, form templates.AuthForm, start func(http.ResponseWriter, *http.Request)) {
	if s.hashOnLoop {
		start(w, r) // the teaching switch: a server of 2002 had no queue either
		return
	}
	s.hashes.enter(w, r, clientKey(r, s.trustProxy), start, func(w http.ResponseWriter, r *http.Request, err error) {
		s.refuseAuth(w, r, page, form, err)
	})
}

// checked is a worker's result: a value or the error that refused it.
type checked[T any] struct {
	v   T
	err error
}

// handleRegister creates a player and logs them in: the password's
// strength estimate (game.CheckPassword) and its bcrypt hash run on the
// engine's worker pool in the client's turn of the fair queue, the insert
// back on the loop. A bad name, password length or faction: 400 and the
// form again, saying each problem at once; then a password too easy to
// guess: 400, saying why; a taken name or a full game (-max-players):
// 409; a client over the attempt limit or the queue's bounds: 429 (503),
// creating nobody.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	if err := s.checkAuthForm(w, r); err != nil {
		s.Error(w, r, err)
		return
	}
	form := templates.AuthForm{Name: r.PostFormValue("name"), Faction: r.PostFormValue("faction")}
	if err := s.checkAuthLimit(w, r); err != nil {
		s.refuseAuth(w, r, "register", form, err)
		return
	}
	// Every problem of the form at once, not the first alone.
	if err := game.ValidateAccount(form.Name, r.PostFormValue("password"), form.Faction); err != nil {
		s.refuseAuth(w, r, "register", form, err)
		return
	}
	f, _ := game.ParseFaction(form.Faction)
	password := r.PostFormValue("password")
	s.hashTurn(w, r, "register", form, func(w http.ResponseWriter, r *http.Request) {
		offLoop(s, w, r, func(context.Context) checked[*game.Enlistment] {
			// The estimate and the hash on a worker (up to 65 ms for a
			// crafted password, 70 ms for bcrypt): no database.
			if err := game.CheckPassword(password, form.Name); err != nil {
				return checked[*game.Enlistment]{nil, err}
			}
			e, err := s.store.NewEnlistment(form.Name, password, f)
			return checked[*game.Enlistment]{e, err}
		}, func(w http.ResponseWriter, r *http.Request, c checked[*game.Enlistment]) {
			err := c.err
			var p *game.Player
			if err == nil {
				p, err = s.store.Enlist(r.Context(), c.v)
			}
			if err != nil {
				s.refuseAuth(w, r, "register", form, err)
				return
			}
			s.pollLive(r.Context()) // "X joined" reaches open streams
			s.loginSucceeded(w, r, p.ID, s.loginAttempt(r, p.Name))
			s.startSession(w, r, p.ID)
		})
	})
}

func (s *Server) checkAuthForm(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	return checkFormToken(r)
}

// startSession creates a session for the player, sets its cookie and sends
// the browser to headquarters.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, playerID int64) {
	sess, err := s.store.CreateSession(r.Context(), playerID)
	if err == nil {
		err = s.setSessionCookie(w, r, sess)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.clearCookie(w, r, formCookie)
	http.Redirect(w, r, "/game?function=hq", http.StatusSeeOther)
}

// handleLogoutForm shows a confirm button, for a GET of /logout.
func (s *Server) handleLogoutForm(w http.ResponseWriter, r *http.Request, v *viewer) error {
	s.render(w, r, http.StatusOK, s.newView(v, "", "Log out"), templates.Logout{})
	return nil
}

// handleLogout deletes the session from the store, so the cookie and any
// URL carrying the tid stop working at once, and clears the cookies. With
// the field everywhere set, it deletes every session of the player: every
// browser and link of theirs must log in again.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := s.checkCSRF(r, v.sid); err != nil {
		return err
	}
	ended := []string{v.sid}
	if r.PostForm.Get("everywhere") != "" {
		var err error
		if ended, err = s.store.DeleteSessions(r.Context(), v.player.ID); err != nil {
			return err
		}
	} else if err := s.store.DeleteSession(r.Context(), v.sid); err != nil {
		return err
	}
	for _, sid := range ended {
		s.endLiveSession(sid)
	}
	s.clearCookie(w, r, sessionCookie)
	s.clearCookie(w, r, flashCookie)
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}
