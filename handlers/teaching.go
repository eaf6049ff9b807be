package handlers

import (
	"context"
	"net/http"

	"github.com/statesecrets/server/gameserver"
)

// offLoop is gameserver.Go: work (a password hash) on the engine's worker
// pool, finish back on the loop. Under the teaching switch
// Options.HashOnLoop it runs work and then finish right here, in the
// handler, on the loop (or under net/http's one lock), as a server of 2002
// did: every other client waits for the hash.
func offLoop[T any](s *Server, w http.ResponseWriter, r *http.Request, work func(context.Context) T,
	finish func(http.ResponseWriter, *http.Request, T)) {
	if s.hashOnLoop {
		finish(w, r, work(r.Context()))
		return
	}
	gameserver.Go(w, r, work, finish)
}
