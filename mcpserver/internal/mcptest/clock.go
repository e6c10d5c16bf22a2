package mcptest

import (
	"sync"
	"time"
)

// Clock is a settable time for code that takes a Now function.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock set to t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
