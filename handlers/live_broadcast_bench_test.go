package handlers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/statesecrets/server/game"
	"github.com/statesecrets/server/gameserver"
	"github.com/statesecrets/server/handlers"
)

// broadcastStreams is how many streams BenchmarkLiveBroadcast holds.
const broadcastStreams = 20_000

// BenchmarkLiveBroadcast holds broadcastStreams event streams open, one
// per player (the clients in a child process), on a gameserver loop
// polling the hub every LivePollInterval, its runs of changes going on at
// the loop's next turn (SetLiveSoon), as cmd/gameserver runs it. Each
// iteration one player posts on the board, on the loop as the handler
// does, and the hub is polled at once, as the handler's own write is; the
// post is one message, the same bytes for every stream. The loop runs on
// CPU 0 and the clients on the others (loopCPUs), as make capacity pins
// them.
//
// It reports how long the post took to reach every stream, from before
// the write to when the child read it on the last (broadcast-ms: the
// longest of the iterations; the goal is at most 1 s), and the loop's own
// longest turn meanwhile (turn-ms, Stats.LongestTurnRecent, after the
// turns that opened the streams left its window; the goal is at most 10
// ms), and the longest of them less the loop thread's wait for a CPU
// during it (turn-own-ms, Stats.LongestTurnOwnRecent: the loop's own
// part), with what the loop's turns held at most (write-ms: the post's
// Store.Act; poll-ms: the PollLive after it, which sends the first share;
// share-ms: a later share; each without the socket writes at the end of
// its turn). It raises the process's open file limit for the streams' sockets
// (as root: both ends of 20,000 streams need more than the 20,000 the
// machine allows a process), or holds fewer streams and says so. With
// STATESECRETS_BENCH_TRACE=DIR it writes a Go execution trace of the
// seconds before each post that had a turn over 10 ms to DIR
// (benchTraceEnv). Run it alone:
//
//	flock /tmp/heavy.lock go test ./handlers -run '^$' -bench LiveBroadcast -benchtime 3x
func BenchmarkLiveBroadcast(b *testing.B) {
	streams := raiseFileLimit(b, broadcastStreams)
	e := newEnv(b)
	ctx := context.Background()
	file := seedSessions(b, e, streams)
	srv := gameserver.New(gameserver.Config{Handler: e.srv, LoopCPUs: loopCPUs()})
	srv.Every(handlers.LivePollInterval, func() { e.srv.PollLive(ctx) })
	var share time.Duration // the longest share after a post's first, on the loop
	e.srv.SetLiveSoon(func(f func()) {
		srv.Post(func() { start := time.Now(); f(); share = max(share, time.Since(start)) })
	})
	e.srv.SetLiveTurn(srv.TurnElapsed)
	out := holdStreams(b, e, srv, file, streams, "post")
	time.Sleep(21 * time.Second) // the opening turns leave LongestTurnRecent's window

	var took []time.Duration
	var write, poll time.Duration // the longest Act and PollLive of a post, on the loop
	require.NoError(b, srv.Post(func() { share = 0 }))
	slow := srv.Stats().SlowTurns
	tr := traceSlowTurns(b, srv)
	for b.Loop() {
		e.clock.Add(game.PostCooldown)
		start := time.Now()
		done := make(chan error, 1)
		require.NoError(b, srv.Post(func() {
			start := time.Now()
			_, err := e.store.Act(ctx, 1, game.Action{Kind: game.PostMessage, Body: "All hands: the truth is out there."})
			acted := time.Now()
			e.srv.PollLive(ctx)
			write, poll = max(write, acted.Sub(start)), max(poll, time.Since(acted))
			done <- err
		}))
		require.NoError(b, <-done)
		took = append(took, out.all(b).Sub(start))
		tr.check(b)
	}
	st := srv.Stats()
	shares := make(chan time.Duration, 1)
	require.NoError(b, srv.Post(func() { shares <- share }))
	share = <-shares
	b.ReportMetric(ms(slices.Max(took)), "broadcast-ms")
	b.ReportMetric(ms(st.LongestTurnRecent), "turn-ms")
	b.ReportMetric(ms(st.LongestTurnOwnRecent), "turn-own-ms")
	b.ReportMetric(float64(st.SlowTurns-slow), "turns>10ms")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(write), "write-ms")
	b.ReportMetric(ms(poll), "poll-ms")
	b.ReportMetric(ms(share), "share-ms")
	b.Logf("%d streams: the post reached them all in %v; the loop's longest turn %v (%v without its wait for a CPU), %d turns over 10 ms; streams cut %d; "+
		"on the loop, at most: the write %v, the poll that sent the first share %v, a later share %v (their socket writes at the turn's end not included)",
		streams, took, st.LongestTurnRecent, st.LongestTurnOwnRecent, st.SlowTurns-slow, st.StreamsCut, write, poll, share)
}

// fileReserve is the open files a benchmark process needs beside its
// streams' server ends: standard files, the pollers, the listener, the
// SQLite files of the Store and its checkpointer, the children's pipes.
const fileReserve = 64

// raiseFileLimit raises the process's open file limit (soft and hard) to
// hold the server ends of n streams (their client ends are in child
// processes, streamsPerChild each), and returns n, or as many as the limit
// it got allows, saying so.
func raiseFileLimit(b *testing.B, n int) int {
	want := uint64(n + fileReserve)
	var lim unix.Rlimit
	require.NoError(b, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	if lim.Cur < want {
		raised := unix.Rlimit{Cur: max(want, lim.Max), Max: max(want, lim.Max)}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err != nil {
			raised = unix.Rlimit{Cur: lim.Max, Max: lim.Max}
			unix.Setrlimit(unix.RLIMIT_NOFILE, &raised)
		}
		require.NoError(b, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	}
	if lim.Cur < want {
		fewer := int(lim.Cur) - fileReserve
		b.Logf("the open file limit is %d (raising it needs CAP_SYS_RESOURCE): %d streams, not %d", lim.Cur, fewer, n)
		return fewer
	}
	return n
}
