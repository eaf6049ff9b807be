// Package cli runs the commands whose whole program is one run function
// (cmd/loadtest, cmd/players): their main is one call.
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Run is a command's whole program: it runs with args (the arguments
// after the program's name) and writes on stdout and stderr until ctx
// ends, and returns the process's exit status.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Main calls run with the process's arguments and standard streams, its
// context cancelled by SIGINT or SIGTERM (a run then stops early and
// reports what it did), and exits with its status. It does not return.
func Main(run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
