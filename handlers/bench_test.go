package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/handlers"
)

// BenchmarkLogin measures POST /login through the whole handler: form
// parsing, the form-token check, one bcrypt comparison, a session row and
// the cookie. Under the gameserver all of it runs on the loop, so ns/op at
// bcrypt.DefaultCost is how long every other client waits for one login.
// Registering costs about the same: one bcrypt hash at the same cost. It
// also reports cpu-ms/op, the process CPU time per login, which a loaded
// machine inflates less than ns/op. The test clock moves on one AuthRefill
// per login, so the attempt limit never refuses one.
func BenchmarkLogin(b *testing.B) {
	for _, cost := range []int{bcrypt.MinCost, bcrypt.DefaultCost} {
		b.Run(fmt.Sprintf("cost=%d", cost), func(b *testing.B) {
			e := newEnv(b)
			e.reopenWithCost(cost)
			e.player("mulder", game.FBI)
			token := "0123456789abcdef0123456789abcdef"
			form := url.Values{"csrf": {token}, "name": {"mulder"}, "password": {"password-mulder"}}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				e.clock.Add(handlers.AuthRefill)
				req := formRequest("/login", form)
				req.AddCookie(&http.Cookie{Name: "ss_form", Value: token})
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkLoginRefused measures a POST /login over the attempt limit:
// what a client looping logins costs the loop once its burst is spent: the
// form, the token check, the limiter and the 429 page, and no bcrypt (at
// bcrypt.DefaultCost here, so a hash run by mistake would show in ns/op).
func BenchmarkLoginRefused(b *testing.B) {
	e := newEnv(b)
	e.reopenWithCost(bcrypt.DefaultCost)
	e.player("mulder", game.FBI)
	token := "0123456789abcdef0123456789abcdef"
	form := url.Values{"csrf": {token}, "name": {"mulder"}, "password": {"password-mulder"}}
	login := func() int {
		req := formRequest("/login", form)
		req.AddCookie(&http.Cookie{Name: "ss_form", Value: token})
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		return rec.Code
	}
	for range handlers.AuthBurst {
		login()
	}
	b.ReportAllocs()
	for b.Loop() {
		if code := login(); code != http.StatusTooManyRequests {
			b.Fatalf("status %d, want 429", code)
		}
	}
}

// BenchmarkHQ measures GET /game?function=hq&tid=..., the dynamic page the
// load test requests: a session lookup, the clock, the feed and the
// template.
func BenchmarkHQ(b *testing.B) {
	e := newEnv(b)
	_, tid := e.player("mulder", game.FBI)
	e.player("krycek", game.MIB)
	target := "/game?function=hq&tid=" + tid
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}

// BenchmarkStatic measures GET / (the front page), the static page the load
// test compares HQ with.
func BenchmarkStatic(b *testing.B) {
	e := newEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
