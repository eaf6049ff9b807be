package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/statesecrets/server/game"
)

// deviceCookie names the browser a player logged in with (OWASP's device
// cookie): 128 random bits, sealed like the session cookie, kept for
// game.KnownClientTTL and renewed at each login. The store remembers which
// players logged in with it, and the failed-login throttle does not hold
// such a browser back for what strangers did to the account (game/logins.go).
const deviceCookie = "ss_device"

// loginAttempt is r's attempt to log in as name: from its device cookie,
// if it has a valid one, and its address (clientKey).
func (s *Server) loginAttempt(r *http.Request, name string) game.LoginAttempt {
	a := game.LoginAttempt{Name: name}
	if id := s.deviceID(r); id != "" {
		a.Clients = append(a.Clients, "device "+id)
	}
	a.Clients = append(a.Clients, "addr "+clientKey(r, s.trustProxy))
	return a
}

// deviceID is the id in r's device cookie, or "" if it has none valid.
func (s *Server) deviceID(r *http.Request) string {
	c, err := r.Cookie(deviceCookie)
	if err != nil {
		return ""
	}
	var id string
	if s.cookies.Decode(deviceCookie, c.Value, &id) != nil || len(id) != 32 {
		return ""
	}
	return id
}

// checkThrottle refuses an attempt the failed-login throttle holds back,
// with 429 and Retry-After, checking nothing; it reports whether the
// account knows the attempt's client.
func (s *Server) checkThrottle(w http.ResponseWriter, r *http.Request, a game.LoginAttempt) (known bool, err error) {
	wait, known, err := s.store.LoginWait(r.Context(), a, s.now())
	if err != nil || wait <= 0 {
		return known, err
	}
	secs := int((wait + time.Second - 1) / time.Second)
	return known, retryAfter(w, wait, http.StatusTooManyRequests, fmt.Sprintf(
		"Too many failed logins for this name: wait %d %s and try again. Nothing was checked. "+
			"(A browser that has logged in to this account before is held back only by its own mistakes.)",
		secs, plural(secs, "second", "seconds")))
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// loginFailed counts a wrong name or password against the attempt. A
// failure to count it is logged: the answer is a refusal anyway.
func (s *Server) loginFailed(r *http.Request, a game.LoginAttempt, known bool, err error) {
	if game.ErrorCode(err) != game.EUNAUTHORIZED {
		return
	}
	if err := s.store.LoginFailed(r.Context(), a, known, s.now()); err != nil {
		s.log.Error("login throttle: count a failure", "err", err)
	}
}

// loginSucceeded makes the attempt's browser and address known to the
// player, giving the browser a device cookie if it has none. A failure to
// record it is logged: the player is logged in anyway.
func (s *Server) loginSucceeded(w http.ResponseWriter, r *http.Request, playerID int64, a game.LoginAttempt) {
	id := s.deviceID(r)
	if id == "" {
		var b [16]byte
		rand.Read(b[:])
		id = hex.EncodeToString(b[:])
		a.Clients = append([]string{"device " + id}, a.Clients...)
	}
	if err := s.store.LoginSucceeded(r.Context(), playerID, a, s.now()); err != nil {
		s.log.Error("login throttle: record a login", "err", err)
	}
	value, err := s.cookies.Encode(deviceCookie, id)
	if err != nil {
		s.log.Error("device cookie", "err", err)
		return
	}
	c := s.cookie(r, deviceCookie, value)
	c.MaxAge = int(game.KnownClientTTL / time.Second)
	http.SetCookie(w, c)
}
