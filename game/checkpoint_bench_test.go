package game_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/statesecrets/server/game"
)

// BenchmarkCommitsBesideCheckpoints is what a caller's writes wait for
// while the WAL is checkpointed: each iteration is one write transaction
// (a private message: several tables and indexes, about ten WAL pages),
// 2 ms after the last (a loop has other work between its writes, and
// checkpoints complete between them), timed from the call to its return,
// with the checkpoints in the commits that take the WAL past 1,000 pages
// (inline: CheckpointInterval -1, as SQLite does it) or on the Store's
// checkpointer (every 100 ms here, so that a run sees many). It reports
// the p50, p99 and longest write and how many took over 5 ms: the fsyncs
// a checkpoint waits for land in the tail of the inline one; with the
// checkpointer, what is left is the sync of the WAL's header in the first
// commit after a checkpoint copied all of it (checkpoint.go). Run it
// alone:
//
//	flock /tmp/heavy.lock go test ./game -run '^$' -bench CommitsBesideCheckpoints -benchtime 3000x
func BenchmarkCommitsBesideCheckpoints(b *testing.B) {
	for _, mode := range []struct {
		name  string
		every time.Duration
	}{{"inline", -1}, {"checkpointer", 100 * time.Millisecond}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			s := MustOpenStore(b, func(o *game.Options) { o.CheckpointInterval = mode.every })
			from := MustRegister(b, s, "alice", game.FBI)
			MustRegister(b, s, "bobby", game.MIB)
			var lat []time.Duration
			for b.Loop() {
				time.Sleep(2 * time.Millisecond)
				start := time.Now()
				if _, err := s.Act(ctx, from.ID, game.Action{Kind: game.Message, To: "bobby", Body: "The truth is out there."}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			slow := 0
			if i := slices.IndexFunc(lat, func(d time.Duration) bool { return d > 5*time.Millisecond }); i >= 0 {
				slow = len(lat) - i
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
			b.ReportMetric(float64(slow), "over-5ms")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: %d writes, %s", mode.name, len(lat), fmt.Sprint(s.Checkpoints()))
		})
	}
}
