package gameserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
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
func (c *core) spawn(body func() error, abandon func()) error {
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer c.loopID.Store(0) // before the thread may run other goroutines
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				panic(v)
			}
			c.cfg.Logger.Error(ErrLoopExited.Error())
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
func (c *core) claim(ln net.Listener) error {
	if c.serving.Swap(true) {
		ln.Close()
		return errors.New("gameserver: Serve called twice")
	}
	return nil
}

// begin marks the loop running; it fails if Shutdown or Close came first.
func (c *core) begin() error {
	if c.q.transition(stateNew, stateRunning) != stateNew {
		return ErrServerClosed
	}
	c.startLag(c.cfg.LagResolution)
	return nil
}

// end marks the loop stopped and releases Shutdown and Close waiters.
func (c *core) end() {
	c.markStopped()
	c.pool.stop()
	c.q.stop()
	c.baseCancel()
	close(c.done)
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
func (c *core) setAddr(a net.Addr) {
	c.baseCtx = context.WithValue(c.baseCtx, http.LocalAddrContextKey, a)
	c.q.mu.Lock()
	c.q.addr = a
	c.q.mu.Unlock()
}

// addr returns the listening address, nil before Serve (Server.Addr).
func (c *core) addr() net.Addr {
	c.q.mu.Lock()
	defer c.q.mu.Unlock()
	return c.q.addr
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
		err = l.run()
	}
	l.teardown()
	return err
}

// onLoop reports whether the caller runs on the loop goroutine.
func (l *loop) onLoop() bool { return l.loopID.Load() == l.sys.self() }

// beginDrain starts a graceful shutdown on the loop: no more accepting or
// user timers; idle connections close, the others after their response.
func (l *loop) beginDrain() {
	if l.draining {
		return
	}
	l.draining = true
	l.stopUserTimers()
	l.sys.closeListener()
	l.sys.each(l.drainIdle)
	if l.count.open == 0 {
		l.stopped = true
	}
}

// drainIdle puts c aside for closing if it has nothing in flight, ends
// its event stream, and marks it to close after its current response
// otherwise (Shutdown). An idle keep-alive connection may have a request
// waiting, unread, in its socket: closing it now would reset the
// connection and lose the request, so it is read now, and closed only
// after one more turn (closeDrained) if it is still idle then: a request
// found is served, with "Connection: close".
func (l *loop) drainIdle(c *conn) {
	if c.phase == phaseStreaming {
		c.stream.Close() // the last chunk, then the connection closes
		c.closeAfter = true
	}
	if c.phase == phaseOpen && c.out.n == 0 && len(c.in) == 0 && !c.eof {
		l.sys.readNow(c)
	}
	switch {
	case c.phase != phaseOpen || len(c.in) > 0:
		// A response in progress, or a request read (whole or in
		// part): its response carries "Connection: close".
	case c.served == 0 && !c.eof:
		// Accepted, but no request begun yet: it may still be on its way
		// (the client connected just before the listener closed, and
		// cannot retry on a connection never used). Its first request is
		// served, with "Connection: close", or ReadHeaderTimeout (from
		// accept) ends the wait.
	case c.out.n > 0:
		c.closeAfter = true // after the response being written
	default:
		l.drainQ = append(l.drainQ, c)
		l.drainTurn = l.turn
	}
}

// closeDrained closes the connections drainIdle put aside that are still
// idle after a turn that read what their sockets held. The loop calls it
// at the end of every turn; it acts once a turn has passed since the
// drain began.
func (l *loop) closeDrained() {
	if len(l.drainQ) == 0 || l.turn == l.drainTurn {
		return
	}
	for i, c := range l.drainQ {
		l.drainQ[i] = nil
		if c.phase == phaseOpen && c.out.n == 0 && len(c.in) == 0 {
			l.closeConn(c)
		}
	}
	l.drainQ = l.drainQ[:0]
}

// forceStop stops the loop at once (Close, or Shutdown's context ending).
func (l *loop) forceStop() { l.stopped = true }

// teardown closes everything left when the loop stops, or when a
// function on it called runtime.Goexit (then a response may be in
// progress: it is abandoned).
func (l *loop) teardown() {
	l.sys.closeListener()
	l.sys.each(func(c *conn) {
		if c.phase == phaseServing {
			c.phase, c.resp = phaseOpen, nil // abandoned by runtime.Goexit
		}
		l.closeConn(c)
	})
	l.stopUserTimers()
	l.readyQ, l.readySpare, l.pending, l.drainQ = nil, nil, nil, nil
	l.endTurn()
	l.q.stop() // before the back end closes: no post may wake it after
	l.sys.close()
	l.end()
}
