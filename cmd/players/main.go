// Command players plays State Secrets against a server with virtual
// players (game/bots on loadtest.RunUsers), to measure how many players
// one server holds:
//
//	players -prepare N -db FILE > tids      seed N players and print a session id (tid) each
//	players [options] -tids FILE URL        play as those players
//	players [options] -register URL         enlist players botNNNNN first (a bcrypt hash each)
//
// Players arrive on an open-loop schedule: -ramp A:B over -over (default),
// or -rate R users per second over -over; the run goes on -hold after the
// last arrival. While connected each player keeps its live stream open,
// views a page every -page-every and gives an order every -order-every on
// average (20 s and 60 s: see game/bots). The report is loadtest's for
// virtual users (text, -json, -json-out, -html, -metrics, -threshold per
// step: page.p99<50ms).
//
// -stop-when THRESHOLD (repeatable) checks each -window of the run and
// ends it at the first window where one fails; the last line is then
// "capacity: N players (engine LABEL, R req/s, E events/s, loop U%,
// longest turn T ms)", N being the players connected at the end of the
// last window that held them all, the figures those of that window (the
// request rate, utilization and longest turn from the server's -metrics,
// the events counted by the players' streams).
//
// Exit status: 0 after a run, 1 when it cannot run, 2 for bad flags, 3
// when a -threshold failed.
package main

import "github.com/statesecrets/server/internal/cli"

func main() { cli.Main(run) }
