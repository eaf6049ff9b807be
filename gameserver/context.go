package gameserver

import (
	"context"
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
type reqCtx struct {
	parent context.Context // for Value: http.LocalAddrContextKey and the like
	mu     sync.Mutex
	done   chan struct{}
	err    error
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

// cancel ends the context with context.Canceled; later calls do nothing.
func (c *reqCtx) cancel() {
	c.mu.Lock()
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
	c.mu.Unlock()
}
