package game_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
)

// BenchmarkWriteContention is write-heavy play with several worker
// processes on one database: each of n Stores (one SQLite connection each,
// as each worker has) posts on the board from its own goroutine as fast as
// it can, so every write but one at a time waits on SQLite's write lock
// (the busy timeout). It reports each write's latency, waits included:
// p50, p99 and max in ms, and writes/s across all Stores. A worker's loop
// is blocked for as long as its write takes.
func BenchmarkWriteContention(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("stores=%d", n), func(b *testing.B) {
			ctx := context.Background()
			first := MustOpenStore(b)
			stores := []*game.Store{first.Store}
			for range n - 1 {
				s, err := game.Open(first.Path, first.Options)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				stores = append(stores, s)
			}
			players := make([]int64, n)
			for i := range n {
				players[i] = MustRegister(b, first, fmt.Sprint("agent", i), game.FBI).ID
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			lat := make([][]time.Duration, n)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i, s := range stores {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						first.Time.Add(game.PostCooldown)
						t0 := time.Now()
						if _, err := s.Act(ctx, players[i], game.Action{Kind: game.PostMessage, Body: "The truth is out there."}); err != nil {
							b.Error(err)
							return
						}
						lat[i] = append(lat[i], time.Since(t0))
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) == 0 {
				return
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(all[len(all)/2]), "p50-ms")
			b.ReportMetric(ms(all[len(all)*99/100]), "p99-ms")
			b.ReportMetric(ms(all[len(all)-1]), "max-ms")
			b.ReportMetric(float64(len(all))/elapsed.Seconds(), "writes/s")
		})
	}
}
