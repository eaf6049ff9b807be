package main

import (
	"bytes"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
)

// sharedScrape answers at most a paced number of scrapes a second (the
// rest wait their turn, asleep), and those that come within fresh of a
// gather with that gather's answer: h runs at most once per fresh for each form
// of answer (text or OpenMetrics, compressed or not), and scrapes that
// arrive while it runs wait for it and share it. A scrape costs about a
// millisecond of CPU (the process collector reads /proc, the encoder
// allocates half a megabyte), on the CPUs the game's loop runs on, so
// clients scraping in a loop would otherwise take the loop's share; with
// it, at most a few gathers a second happen however many scrape, and a
// scrape sees figures at most fresh old (Prometheus, scraping every 15 s,
// and make loadtest, before and after runs of seconds, see them fresh).
type sharedScrape struct {
	h     http.Handler
	fresh time.Duration
	pace  *pacer // scrapes a second

	mu   sync.Mutex // held for a gather
	last map[string]*scrapeAnswer
}

// maxScrapeForms bounds the answers kept: a client sending odd Accept
// headers makes more forms, and past this many the oldest are dropped.
const maxScrapeForms = 8

// scrapeAnswer is one gather's answer, as h wrote it.
type scrapeAnswer struct {
	at     time.Time
	code   int
	header http.Header
	body   bytes.Buffer
}

func (a *scrapeAnswer) Header() http.Header { return a.header }
func (a *scrapeAnswer) Write(p []byte) (int, error) {
	if a.code == 0 {
		a.code = http.StatusOK
	}
	return a.body.Write(p)
}
func (a *scrapeAnswer) WriteHeader(code int) {
	if a.code == 0 {
		a.code = code
	}
}

// newSharedScrape returns h answering at most rate scrapes a second (0:
// no limit; burst of them at once) from gathers at most fresh old (0:
// every scrape gathers).
func newSharedScrape(h http.Handler, fresh time.Duration, rate, burst float64) http.Handler {
	if fresh <= 0 && rate <= 0 {
		return h
	}
	return &sharedScrape{h: h, fresh: fresh, pace: &pacer{rate: rate, burst: burst}, last: make(map[string]*scrapeAnswer)}
}

func (s *sharedScrape) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.pace.wait()
	a := s.answer(r)
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	w.WriteHeader(a.code)
	w.Write(a.body.Bytes())
}

// answer returns a fresh answer to r's form of scrape, gathering one if
// there is none.
func (s *sharedScrape) answer(r *http.Request) *scrapeAnswer {
	form := string(expfmt.NegotiateAccept(r.Header, expfmt.DefaultOpenMetricsAcceptedFormats()...)) + "\x00" + r.Header.Get("Accept-Encoding")
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.last[form]; a != nil && time.Since(a.at) < s.fresh {
		return a
	}
	a := &scrapeAnswer{header: make(http.Header)}
	s.h.ServeHTTP(a, r)
	if a.code == 0 {
		a.code = http.StatusOK
	}
	a.at = time.Now()
	if len(s.last) >= maxScrapeForms {
		clear(s.last)
	}
	s.last[form] = a
	return a
}
