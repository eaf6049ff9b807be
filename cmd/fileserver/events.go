package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/statesecrets/server/gameserver"
)

// events serves an event stream at its path, for make bench-streams: GET
// opens a stream, POST broadcasts its body as one event ("data: BODY") to
// every open stream and answers how many it reached. Every heartbeat an
// SSE comment (":") goes to every stream. Its state is touched only on the
// loop.
type events struct {
	path    string
	files   http.Handler
	srv     *gameserver.Server
	logger  *slog.Logger
	streams []*gameserver.EventStream
}

// maxEvent bounds a broadcast's body.
const maxEvent = 4 << 10

func (e *events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != e.path {
		e.files.ServeHTTP(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		gameserver.Stream(w, r, func(s *gameserver.EventStream) {
			s.WriteString(": open\n\n")
			e.streams = append(e.streams, s)
		})
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxEvent))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		start := time.Now()
		n := e.broadcast(append(append([]byte("data: "), body...), "\n\n"...))
		queued := time.Since(start)
		// A timer of 0 fires on the next turn, after this turn has written
		// every stream's output (as far as the sockets take it).
		e.srv.AfterFunc(0, func() {
			e.logger.Info("broadcast", "streams", n, "queued", queued, "written", time.Since(start))
		})
		fmt.Fprintf(w, "sent %d\n", n)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// broadcast sends p to every open stream, forgetting the closed ones.
func (e *events) broadcast(p []byte) int {
	open := e.streams[:0]
	for _, s := range e.streams {
		if !s.Closed() {
			open = append(open, s)
		}
	}
	clear(e.streams[len(open):])
	e.streams = open
	return gameserver.Broadcast(e.streams, p)
}

// heartbeat keeps quiet streams alive through proxies (see
// gameserver.EventStream).
func (e *events) heartbeat(s *gameserver.Server, period time.Duration) {
	s.Every(period, func() { e.broadcast([]byte(":\n\n")) })
}
