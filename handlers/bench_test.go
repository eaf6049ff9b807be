package handlers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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
// load test requests, through the whole handler (session lookup, queries,
// rendering) on the benchmark game of 20 players (see populate). It is
// BenchmarkPages' hq case under the name the load test's notes quote.
func BenchmarkHQ(b *testing.B) {
	e, tid := populate(b, 20)
	benchPage(b, e, "/game?function=hq&tid="+tid)
}

// BenchmarkPages measures GET of every game page through the whole handler
// (session lookup by tid, queries, rendering, headers), on a game of 20
// players and one of 1,500 (see populate), each page as its player sees it.
// Besides ns/op and allocs/op it reports cpu-ns/op, the process CPU time per
// request (all threads: the garbage collector's share included), which a
// loaded machine inflates less than wall time.
func BenchmarkPages(b *testing.B) {
	for _, n := range []int{20, 1500} {
		e, tid := populate(b, n)
		for _, page := range []string{"hq", "sources", "dossiers", "ranking", "news", "board"} {
			b.Run(fmt.Sprintf("players=%d/%s", n, page), func(b *testing.B) {
				benchPage(b, e, "/game?function="+page+"&tid="+tid)
			})
		}
	}
}

// BenchmarkPagesAfterWrite is BenchmarkPages with a write before each
// request (a logout of no session: a write transaction that changes
// nothing), so every page is read from the database and rendered afresh:
// what the first view of a page costs after an action or a tick. The write
// itself is not timed.
func BenchmarkPagesAfterWrite(b *testing.B) {
	for _, n := range []int{20, 1500} {
		e, tid := populate(b, n)
		for _, page := range []string{"hq", "sources", "dossiers", "ranking", "news", "board"} {
			b.Run(fmt.Sprintf("players=%d/%s", n, page), func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, "/game?function="+page+"&tid="+tid, nil)
				w := &benchWriter{header: make(http.Header)}
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if err := e.store.DeleteSession(b.Context(), strings.Repeat("0", 32)); err != nil {
						b.Fatal(err)
					}
					w.reset()
					b.StartTimer()
					e.srv.ServeHTTP(w, req)
					if w.code != http.StatusOK {
						b.Fatalf("status %d", w.code)
					}
				}
			})
		}
	}
}

// benchPage requests target from e's server b.N times, each a 200 of the
// same length (ab counts a page whose length changes as failed). The
// request is parsed once and the response discarded (benchWriter), so the
// figures are the handler's: under the gameserver the engine parses and
// writes, and its own benchmarks measure that.
func benchPage(b *testing.B, e *env, target string) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	w := &benchWriter{header: make(http.Header)}
	e.srv.ServeHTTP(w, req)
	length := w.n
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		w.reset()
		e.srv.ServeHTTP(w, req)
		if w.code != http.StatusOK || w.n != length {
			b.Fatalf("status %d, %d bytes (the first had %d)", w.code, w.n, length)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(length), "bytes")
}

// benchWriter is the least http.ResponseWriter: it keeps the status and
// counts the body's bytes.
type benchWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

func (w *benchWriter) reset() {
	clear(w.header)
	w.code, w.n = 0, 0
}

// populate opens the benchmark game: n players of alternating factions;
// the first 20 each post game.KeepFeed times (a full feed of their own
// lines, and a full board); the first player, whose session id it returns,
// then spies on a few of the other side (some dossiers filled, news of the
// failures);
// and the clock ticks to catch up, pruning the feeds, news and board to
// what the game keeps.
func populate(b *testing.B, n int) (*env, string) {
	b.Helper()
	e := newEnv(b)
	ctx := b.Context()
	players := make([]*game.Player, n)
	var tid string
	for i := range n {
		if i == 0 {
			players[i], tid = e.player(fmt.Sprintf("agent%04d", i), game.FBI)
			continue
		}
		p, err := e.store.Register(ctx, fmt.Sprintf("agent%04d", i), "password-agent", []game.Faction{game.FBI, game.MIB}[i%2])
		if err != nil {
			b.Fatal(err)
		}
		players[i] = p
	}
	for round := range game.KeepFeed {
		for _, p := range players[:min(n, 20)] {
			body := fmt.Sprintf("Report %d from %s: the truth is out there.", round, p.Name)
			if _, err := e.store.Act(ctx, p.ID, game.Action{Kind: game.PostMessage, Body: body}); err != nil {
				b.Fatal(err)
			}
		}
		e.clock.Add(game.PostCooldown)
	}
	for _, p := range players[1:min(n, 10)] {
		if p.Faction == players[0].Faction {
			continue // nobody spies on their own side
		}
		if _, err := e.store.Act(ctx, players[0].ID, game.Action{Kind: game.Spy, TargetID: p.ID}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.store.Tick(ctx); err != nil {
		b.Fatal(err)
	}
	return e, tid
}

// BenchmarkStatic measures GET / (the front page), the static page the load
// test compares HQ with, in the same way as the game pages.
func BenchmarkStatic(b *testing.B) {
	benchPage(b, newEnv(b), "/")
}
