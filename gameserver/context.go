package gameserver

import (
	"context"
	"slices"
	"sync"
	"time"
)

// reqCtx is a request's context: the server's base context's values, and
// a cancellation of its own that the loop triggers when the response ends
// or the client goes away. It lives in the request's allocation
// (requestAlloc) and makes its Done channel only when someone asks for
// it, so a request whose context nobody watches costs no channel and no
// allocation. Its methods are safe from any goroutine; cancel runs on the
// loop.
//
// It has an AfterFunc method, which the context package uses to tie a
// context derived from it (context.WithTimeout(r.Context(), ...)) to its
// cancellation, instead of a goroutine waiting on Done for each one.
type reqCtx struct {
	parent context.Context // for Value: http.LocalAddrContextKey and the like
	mu     sync.Mutex
	done   chan struct{}
	err    error
	afters []*func() // AfterFunc's functions not yet run or stopped
}

func (c *reqCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *reqCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *reqCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *reqCtx) Value(key any) any { return c.parent.Value(key) }

func (c *reqCtx) String() string { return "gameserver.requestContext" }

// AfterFunc arranges for f to run on a goroutine of its own once c is
// canceled (at once if it is); stop prevents that and reports whether it
// did, as context.AfterFunc.
func (c *reqCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	p := &f
	c.afters = append(c.afters, p)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.afters, p)
		if i < 0 {
			return false
		}
		c.afters = slices.Delete(c.afters, i, i+1)
		return true
	}
}

// cancel ends the context with context.Canceled; later calls do nothing.
func (c *reqCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	for _, f := range c.afters {
		go (*f)()
	}
	c.afters = nil
}
