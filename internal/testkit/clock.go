package testkit

import (
	"sync"
	"time"
)

// Clock is a clock a test sets and moves by hand, for code that takes a
// func() time.Time (game.Options.Now, handlers.Options.Now); safe for
// concurrent use. NewClock makes one.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads t until moved.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d (back, for a negative d).
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
