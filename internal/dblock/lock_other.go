//go:build !unix

package dblock

import "os"

// Lock: elsewhere no lock is taken (no flock), so nothing stops a second
// process on the same database.
type Lock struct{}

// Take takes nothing on this system.
func Take(db string, workers int) (*Lock, error) { return &Lock{}, nil }

// Reloaded records nothing on this system.
func (l *Lock) Reloaded(err error) error { return nil }

// Close releases nothing on this system.
func (l *Lock) Close() error { return nil }

// Held reports false on this system.
func Held(f *os.File) bool { return false }
