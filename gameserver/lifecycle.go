package gameserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"time"
)

// Lifecycle of a loop, guarded by postQueue.mu.
const (
	stateNew     = iota // before Serve
	stateRunning        // Serve is running the loop
	stateStopped        // the loop has stopped, or Shutdown/Close came before Serve
)

// spawn runs body, the loop's life from start to teardown, on a new
// goroutine locked to its OS thread, and returns its result. If a handler,
// timer or posted function calls runtime.Goexit (as testing's t.FailNow
// does), the loop cannot go on: abandon (the back end's teardown) closes
// the listener and every connection and marks the server stopped, and
// spawn returns ErrLoopExited instead of leaving Serve and every client
// waiting forever. A panic that escapes body is not ours to handle: it
// goes on, and ends the program.
func (l *loop) spawn(body func() error, abandon func()) error {
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer l.loopID.Store(0) // before the thread may run other goroutines
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				panic(v)
			}
			l.cfg.Logger.Error(ErrLoopExited.Error())
			abandon()
			res <- ErrLoopExited
		}()
		err := body()
		returned = true
		res <- err
	}()
	return <-res
}

// claim lets exactly one Serve call proceed.
func (l *loop) claim(ln net.Listener) error {
	if l.serving.Swap(true) {
		ln.Close()
		return errors.New("gameserver: Serve called twice")
	}
	return nil
}

// begin marks the loop running; it fails if Shutdown or Close came first.
func (l *loop) begin() error {
	if l.q.transition(stateNew, stateRunning) != stateNew {
		return ErrServerClosed
	}
	l.startLag(l.cfg.LagResolution)
	return nil
}

// end marks the loop stopped and releases Shutdown and Close waiters.
func (l *loop) end() {
	l.markStopped()
	l.pool.stop()
	l.q.stop()
	l.baseCancel()
	close(l.done)
}

// shutdown asks the loop to drain (Server.Shutdown).
func (l *loop) shutdown(ctx context.Context) error {
	if l.q.transition(stateNew, stateStopped) == stateNew {
		l.end()
		return nil
	}
	if l.post(l.beginDrain) != nil {
		<-l.done
		return nil
	}
	if l.onLoop() {
		return ErrLoopGoroutine // waiting here would wait for ourselves
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		l.close()
		return ctx.Err()
	}
}

// close asks the loop to stop at once (Server.Close).
func (l *loop) close() error {
	if l.q.transition(stateNew, stateStopped) == stateNew {
		l.end()
		return nil
	}
	if l.post(l.forceStop) == nil && l.onLoop() {
		return ErrLoopGoroutine
	}
	<-l.done
	return nil
}

// setAddr records the listening address for Server.Addr and in the
// requests' context, as net/http does. It runs before the loop starts.
func (l *loop) setAddr(a net.Addr) {
	l.baseCtx = context.WithValue(l.baseCtx, http.LocalAddrContextKey, a)
	l.q.mu.Lock()
	l.q.addr = a
	l.q.mu.Unlock()
}

// addr returns the listening address, nil before Serve (Server.Addr).
func (l *loop) addr() net.Addr {
	l.q.mu.Lock()
	defer l.q.mu.Unlock()
	return l.q.addr
}

// serve runs the loop on a goroutine of its own and waits for it
// (Server.Serve).
func (l *loop) serve(ln net.Listener) error {
	if err := l.claim(ln); err != nil {
		return err
	}
	return l.spawn(func() error { return l.serveLocked(ln) }, l.teardown)
}

// serveLocked is the loop goroutine's life, locked to its OS thread.
func (l *loop) serveLocked(ln net.Listener) error {
	l.loopID.Store(l.sys.self())
	if len(l.cfg.LoopCPUs) > 0 {
		restore, err := pinThread(l.cfg.LoopCPUs)
		if err != nil {
			ln.Close()
			return err
		}
		defer restore() // also after runtime.Goexit: the thread goes back to the Go runtime
	}
	l.openWaits()
	defer l.closeWaits()
	if err := l.sys.open(); err != nil {
		ln.Close()
		return err
	}
	if err := l.begin(); err != nil {
		l.sys.close()
		ln.Close()
		return err
	}
	l.setAddr(ln.Addr())
	err := l.sys.listen(ln)
	if err == nil {
		l.listening = true
		err = l.run()
	}
	l.teardown()
	return err
}

// onLoop reports whether the caller runs on the loop goroutine.
func (l *loop) onLoop() bool { return l.loopID.Load() == l.sys.self() }

// Listener drain, Shutdown's first step (see Server.Shutdown).
const (
	handshakeDrain = 1500 * time.Millisecond // the longest the listener stays open for handshakes under way
	handshakePoll  = 5 * time.Millisecond    // how often the drain asks whether one still is
	handshakeGuess = 100 * time.Millisecond  // how long it stays open when the system cannot tell
)

// beginDrain starts a graceful shutdown on the loop (Server.Shutdown):
// no more user timers; the listener stops taking new connections without
// resetting those on their way (stopListening); every connection serves
// what arrived before the drain, then closes (drainConn).
func (l *loop) beginDrain() {
	if l.draining {
		return
	}
	l.draining = true
	l.drainStart = l.now
	l.stopUserTimers()
	l.sys.each(l.drainConn)
	l.stopListening()
	l.stopIfDrained()
}

// stopIfDrained ends the loop after this turn once the drain has nothing
// left: no connection, and the listener closed.
func (l *loop) stopIfDrained() {
	if l.draining && l.count.OpenConns == 0 && !l.listening {
		l.stopped = true
	}
}

// stopListening stops new connections. A socket the server owns first
// drops new handshakes, then stays open until those under way have
// completed into its accept queue (or handshakeDrain has passed), each
// connection accepted meanwhile being served; otherwise the listener
// closes at once, after the queued connections are accepted.
func (l *loop) stopListening() {
	if !l.listening {
		return
	}
	if l.cfg.SharedListener || !l.sys.refuseHandshakes() {
		l.closeListener()
		return
	}
	l.pollHandshakes()
}

// pollHandshakes closes the listener once no handshake to it is under way
// or handshakeDrain has passed since the drain began, and otherwise looks
// again after handshakePoll.
func (l *loop) pollHandshakes() {
	elapsed := time.Duration(l.clock() - l.drainStart)
	pending, err := l.sys.handshaking()
	if err != nil {
		pending = elapsed < handshakeGuess
	}
	if pending && elapsed < handshakeDrain {
		l.afterLoop(handshakePoll, l.pollHandshakes)
		return
	}
	l.closeListener()
	l.stopIfDrained()
}

// closeListener accepts the connections queued on the listener, to serve
// them, and closes it.
func (l *loop) closeListener() {
	l.sys.acceptQueued()
	l.sys.closeListener()
	l.listening = false
}

// drainConn sets c to serve what arrived before the drain began and then
// close (Server.Shutdown). drainLeft counts the input c or its socket
// holds: a request that ends at or past it is the last, answered with
// "Connection: close" (serveInput). An event stream ends (its last chunk)
// and its connection after it, unless requests wait behind it. With
// nothing left to serve, a response not sent yet says "Connection: close"
// instead, and an idle connection waits DrainIdleTimeout for a request
// (see rearm).
func (l *loop) drainConn(c *conn) {
	c.drainLeft = len(c.in) + l.sys.unread(c)
	if c.phase == phaseStreaming {
		c.stream.Close()
		if c.drainLeft == 0 {
			c.closeAfter = true
		}
	}
	switch {
	case c.drainLeft > 0:
	case c.resp != nil && !c.resp.headerSent:
		c.resp.closeAfter = true
	case c.idle():
		l.setDeadline(c, earliest(c.deadline, l.drainIdleDeadline()))
	}
}

// drainIdleDeadline is the deadline of a connection idle from now while
// the server drains (Config.DrainIdleTimeout): negative closes it on the
// next turn.
func (l *loop) drainIdleDeadline() int64 {
	if l.cfg.DrainIdleTimeout < 0 {
		return l.now
	}
	return l.now + int64(l.cfg.DrainIdleTimeout)
}

// earliest returns the earlier of two deadlines, 0 meaning none.
func earliest(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// forceStop stops the loop at once (Close, or Shutdown's context ending).
// Responses still deferred (work queued or running, a Finish not yet
// called) are answered 503 first, and what the sockets take of them now
// is written, so those clients get an answer they can retry on instead
// of a closed connection.
func (l *loop) forceStop() {
	l.sys.each(func(c *conn) {
		if c.phase == phaseDeferred {
			l.answerUnavailable(c)
		}
	})
	l.flushPending()
	l.stopped = true
}

// teardown closes everything left when the loop stops, or when a
// function on it called runtime.Goexit (then a response may be in
// progress: it is abandoned).
func (l *loop) teardown() {
	l.sys.closeListener()
	l.listening = false
	l.sys.each(func(c *conn) {
		if c.phase == phaseServing {
			c.resp = nil // abandoned by runtime.Goexit
			l.enter(c, phaseOpen)
		}
		l.closeConn(c)
	})
	l.runEnded() // the closed streams' OnClose functions
	l.stopUserTimers()
	l.readyQ, l.readySpare, l.pending = nil, nil, nil
	l.endTurn()
	l.q.stop() // before the back end closes: no post may wake it after
	l.sys.close()
	l.end()
}
