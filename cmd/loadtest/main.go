// Command loadtest is an ab-compatible closed-loop HTTP load generator:
//
//	loadtest [options] http://host[:port]/path
//	loadtest gap [options] STATIC_URL DYNAMIC_URL
//
// The first form takes ab's flags with ab's meaning and prints ab's report
// (or -json); the second measures two pages at the same settings and
// compares them with the State Secrets 2002 figures. See loadtest/README.md.
//
// Exit status: 0 after a run (failed requests are in the report, as ab),
// 1 when the run aborts as ab would (receive error without -r, more than 10
// failed connects) or cannot start, 2 for bad flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
