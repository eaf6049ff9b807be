// Command loadtest is an ab-compatible HTTP load generator:
//
//	loadtest [options] http://host[:port]/path
//	loadtest gap [options] STATIC_URL DYNAMIC_URL
//	loadtest hol [-c N] [-k] [-t S] [-rate R] [options] STATIC_URL DYNAMIC_URL
//	loadtest sweep [-k] [-t S] -c 1,2,4,...,256 [options] URL...
//	loadtest explain [-machine V] gap|hol|sweep|storm|engines|machine|hol-scale ARGS...
//
// The first form takes ab's flags with ab's meaning and prints ab's report
// (or -json), open-loop with -rate; gap measures two pages at the same
// settings and compares them with the State Secrets 2002 figures; hol
// measures head-of-line blocking; sweep a range of concurrencies. -html
// writes an HTML report, -threshold sets pass/fail criteria, -metrics reads
// the server loop's figures, -B connects from many local addresses,
// -json-out keeps the JSON beside the text, and explain prints sentences on
// what such JSON files show (exit 1 when one of their runs had failed
// requests). See loadtest/README.md.
//
// Exit status: 0 after a run (failed requests are in the report, as ab),
// 1 when the run aborts as ab would (receive error without -r, more than 10
// failed connects) or cannot start, 2 for bad flags, 3 when a -threshold
// failed.
package main

import "github.com/statesecrets/server/internal/cli"

func main() { cli.Main(run) }
