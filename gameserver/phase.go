package gameserver

import "strconv"

// phase is where a connection is in its life. Every change goes through
// loop.enter, along one of the moves in transitions.
//
// While serving, deferred or streaming (held), the connection reads and
// serves nothing more: pipelined requests wait in order behind the
// response. A held deferred or streaming connection whose client goes
// away is closed at once. The conn's flags are not phases: each holds
// beside any of them (eof, closeAfter and linger are what the client did
// or what was decided for the connection's end, needMore and continued
// are the parser's, broken marks a close waiting for its handler to
// return, queued and marked say which of the loop's lists hold c).
type phase uint8

const (
	phaseOpen      phase = iota // no response in progress: reading or idle
	phaseServing                // a handler or Finish function runs for it (c.resp)
	phaseDeferred               // its response left the handler and waits for Finish (c.resp)
	phaseStreaming              // an event stream is open on it (c.stream)
	phaseLingering              // write side shut down, discarding input until EOF
	phaseClosed                 // closed: the loop forgets it
	numPhases
)

var phaseNames = [numPhases]string{"open", "serving", "deferred", "streaming", "lingering", "closed"}

func (p phase) String() string {
	if p < numPhases {
		return phaseNames[p]
	}
	return "phase(" + strconv.Itoa(int(p)) + ")"
}

// transitions is every move a connection makes, and where the code makes
// it. TestTransitionsTable checks that the code makes each, and only
// these.
var transitions = []struct {
	from, to phase
	why      string
}{
	{phaseOpen, phaseServing, "a request is complete, or refused: its handler runs (startResponse)"},
	{phaseServing, phaseOpen, "the handler or Finish function returned (finishResponse)"},
	{phaseServing, phaseDeferred, "the handler deferred its response (Defer)"},
	{phaseDeferred, phaseServing, "Finish's function runs, DeferTimeout's 503 is written, or a panic after Defer takes it back"},
	{phaseServing, phaseStreaming, "the handler opened an event stream (Stream)"},
	{phaseStreaming, phaseOpen, "the stream was closed, its last chunk queued (EventStream.Close)"},
	{phaseOpen, phaseLingering, "after the last response, unread input may remain (closeOrLinger)"},
	{phaseOpen, phaseClosed, "closeConn: done, timed out, or gone"},
	{phaseDeferred, phaseClosed, "closeConn: the client went away, or the server stops"},
	{phaseStreaming, phaseClosed, "closeConn: the client went away, or the stream was cut"},
	{phaseLingering, phaseClosed, "closeConn: the client's EOF, or lingerTime"},
}

// allowed[from] has bit to set for each move in transitions.
var allowed = func() (a [numPhases]uint8) {
	for _, t := range transitions {
		a[t.from] |= 1 << t.to
	}
	return a
}()

// badTransition reports a move the table does not have: a bug. The
// package's tests make it fail the test; in production it is logged.
var badTransition = func(l *loop, c *conn, from, to phase) {
	l.cfg.Logger.Error("gameserver: connection phase change not in the table", "from", from.String(), "to", to.String(), "remote", c.remote)
}

// sawTransition, when the tests set it, sees every move.
var sawTransition func(from, to phase)

// enter moves c to phase to, keeping the counters of deferred responses,
// streams and open connections, and the list of idle connections (only an
// open connection may be idle): the one place a connection's phase
// changes (net/http's setState).
func (l *loop) enter(c *conn, to phase) {
	from := c.phase
	if allowed[from]&(1<<to) == 0 {
		badTransition(l, c, from, to)
	}
	if sawTransition != nil {
		sawTransition(from, to)
	}
	switch from {
	case phaseOpen:
		l.idle.remove(c)
	case phaseDeferred:
		l.count.Deferred--
	case phaseStreaming:
		l.count.Streams--
	}
	switch to {
	case phaseDeferred:
		l.count.Deferred++
	case phaseStreaming:
		l.count.Streams++
	case phaseClosed:
		l.count.OpenConns--
		l.peers.remove(c.peer)
	}
	c.phase = to
}
