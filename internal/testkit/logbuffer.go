package testkit

import (
	"bytes"
	"sync"
)

// LogBuffer is an io.Writer that the code under test writes to (a
// logger, from its goroutines) while the test reads what it holds. The
// zero value is empty and ready.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it is safe from any goroutine.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
