// Command fileserver serves a directory from memory through package
// gameserver, for benchmarks against nginx (make bench-nginx, bench-idle).
//
//	fileserver -root DIR [-addr 127.0.0.1:8081] [-events /events]
//
// With -events, that path serves an event stream (make bench-streams):
// GET opens one, POST broadcasts its body to all of them.
//
// It logs "msg=serving addr=HOST:PORT" to stderr once it listens (so
// -addr 127.0.0.1:0 works) and shuts down gracefully on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/statesecrets/server/cmd/fileserver/memfs"
	"github.com/statesecrets/server/gameserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "fileserver:", err)
		os.Exit(2)
	}
}

// run serves until ctx ends; log lines go to stderr.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("fileserver", flag.ContinueOnError)
	fl.SetOutput(stderr)
	addr := fl.String("addr", "127.0.0.1:8081", "TCP address to listen on, host:port (port 0: any free port)")
	root := fl.String("root", "", "directory to serve, read into memory at start-up (required)")
	eventsPath := fl.String("events", "", "serve event streams at this path (GET: open one; POST: broadcast the body to all); empty: none")
	heartbeat := fl.Duration("heartbeat", 20*time.Second, "with -events, the period of the comment line sent to every stream")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile (pprof) of the whole run to this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *root == "" {
		return errors.New("-root is required: the directory to serve")
	}
	h, err := memfs.Load(*root)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	var handler http.Handler = h
	var ev *events
	if *eventsPath != "" {
		ev = &events{path: *eventsPath, files: h, logger: logger}
		handler = ev
	}
	s := gameserver.New(gameserver.Config{Handler: handler, Logger: logger})
	if ev != nil {
		ev.srv = s
		if *heartbeat > 0 {
			ev.heartbeat(s, *heartbeat)
		}
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(sctx)
	}()
	logger.Info("serving", "addr", l.Addr().String(), "root", *root)
	if err := s.Serve(l); !errors.Is(err, gameserver.ErrServerClosed) {
		return err
	}
	return nil
}
