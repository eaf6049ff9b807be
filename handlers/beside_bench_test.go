package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
)

// besidePages are the pages the readers of BenchmarkPagesBesideWriter view,
// in turn.
var besidePages = []string{"hq", "sources", "dossiers", "ranking", "news", "board"}

// BenchmarkPagesBesideWriter measures what one player writing at full
// speed costs every other player's pages: readers (besideReaders players,
// each its own keep-alive connection) view the game's pages in turn on a
// gameserver loop, in a game of 1,500 players (populate) and one of 10,000
// (Store.Seed), for besidePhase with no writer, then for besidePhase beside
// a writer that gives one write after another on the loop, as a handler
// would (posted to it, the next as soon as the last is done), three times
// over, interleaved. Each write is a private message (free: no AP, no
// cash) from one of 100 players to another of 100 others, none of them a
// reader.
//
// It reports, per page, the p50 of the page's handler time (on the loop,
// from the request to the response: what the page cost) beside the writer
// over the p50 without it, in the same run (PAGE-x; the goal: at most
// 1.5), the same for the readers' whole latency (PAGE-e2e-x: the wait
// behind the writes the loop runs between pages is in it), the handler
// p50 without the writer (PAGE-ms), and the writes per second (writes/s;
// only those the game took count). Run it alone:
//
//	flock /tmp/heavy.lock go test ./handlers -run '^$' -bench PagesBesideWriter -benchtime 1x
func BenchmarkPagesBesideWriter(b *testing.B) {
	for _, n := range []int{1500, 10_000} {
		b.Run(fmt.Sprintf("players=%d", n), func(b *testing.B) { benchBesideWriter(b, n) })
	}
}

func benchBesideWriter(b *testing.B, players int) {
	var e *env
	if players <= 1500 {
		e, _ = populate(b, players)
	} else {
		e = newEnv(b)
		_, err := e.store.Seed(b.Context(), players)
		require.NoError(b, err)
	}
	ctx := b.Context()
	var handled pageTimes
	addr, srv := serveGameserver(b, handled.timing(e.srv), nil, gameserver.Config{})
	var tids []string
	for id := int64(1); id <= besideReaders; id++ {
		sess, err := e.store.CreateSession(ctx, id)
		require.NoError(b, err)
		tids = append(tids, sess.ID)
	}
	var writing atomic.Bool
	var writes atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go besideWriter(e, srv.Post, &writing, &writes, stop)

	var lat, hlat [2]map[string][]time.Duration // [0] alone, [1] beside the writer
	var wrote time.Duration
	var n int64
	for b.Loop() {
		lat, hlat = [2]map[string][]time.Duration{{}, {}}, [2]map[string][]time.Duration{}
		for range 3 {
			for phase := range 2 {
				writing.Store(phase == 1)
				before, start := writes.Load(), time.Now()
				handled.begin()
				readPages(b, addr, tids, lat[phase])
				hlat[phase] = handled.add(hlat[phase])
				if phase == 1 {
					n += writes.Load() - before
					wrote += time.Since(start)
				}
			}
		}
		writing.Store(false)
	}
	for _, page := range besidePages {
		b.ReportMetric(ms(p50(hlat[0][page])), page+"-ms")
		b.ReportMetric(float64(p50(hlat[1][page]))/float64(p50(hlat[0][page])), page+"-x")
		b.ReportMetric(float64(p50(lat[1][page]))/float64(p50(lat[0][page])), page+"-e2e-x")
	}
	b.ReportMetric(float64(n)/wrote.Seconds(), "writes/s")
	b.ReportMetric(0, "ns/op")
}

// pageTimes collects the handler time of each /game page, by its function.
type pageTimes struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

// timing wraps h to time each GET /game into t.
func (t *pageTimes) timing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		d := time.Since(start)
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.by != nil && r.URL.Path == "/game" {
			page := r.URL.Query().Get("function")
			t.by[page] = append(t.by[page], d)
		}
	})
}

// begin starts collecting anew.
func (t *pageTimes) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.by = map[string][]time.Duration{}
}

// add stops collecting and adds what was collected to m (a new map if nil).
func (t *pageTimes) add(m map[string][]time.Duration) map[string][]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m == nil {
		m = map[string][]time.Duration{}
	}
	for page, ds := range t.by {
		m[page] = append(m[page], ds...)
	}
	t.by = nil
	return m
}

const (
	besideReaders = 4
	besidePhase   = time.Second
)

// besideWriter gives private messages on the loop (post) one after
// another while writing is set, counting those the game took, until stop
// closes.
func besideWriter(e *env, post func(func()) error, writing *atomic.Bool, writes *atomic.Int64, stop chan struct{}) {
	ctx := context.Background()
	names := map[int64]string{}
	for id := int64(200); id < 300; id++ {
		p, err := e.store.Player(ctx, id)
		if err != nil {
			panic(err)
		}
		names[id] = p.Name
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if !writing.Load() {
			time.Sleep(time.Millisecond)
			continue
		}
		from, to := int64(100+i%100), int64(200+i%100)
		a := game.Action{Kind: game.Message, To: names[to], Body: "Meet me at the usual place."}
		done := make(chan error, 1)
		if post(func() { _, err := e.store.Act(ctx, from, a); done <- err }) != nil {
			return
		}
		if <-done == nil {
			writes.Add(1)
		}
	}
}

// readPages has each reader (one per tid) view besidePages in turn over
// its own connection for besidePhase, adding each page's latency to lat.
func readPages(b *testing.B, addr string, tids []string, lat map[string][]time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := time.Now().Add(besidePhase)
	for r, tid := range tids {
		wg.Go(func() {
			c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
			defer c.CloseIdleConnections()
			mine := map[string][]time.Duration{}
			for i := r; time.Now().Before(deadline); i++ {
				page := besidePages[i%len(besidePages)]
				start := time.Now()
				resp, err := c.Get("http://" + addr + "/game?function=" + page + "&tid=" + tid)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("%s: status %d", page, resp.StatusCode)
					return
				}
				mine[page] = append(mine[page], time.Since(start))
			}
			mu.Lock()
			defer mu.Unlock()
			for page, d := range mine {
				lat[page] = append(lat[page], d...)
			}
		})
	}
	wg.Wait()
}

// p50 is the median of ds (0 for none).
func p50(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
