//go:build !unix

package main

import (
	"context"
	"errors"
	"io"
)

// serverLock: elsewhere no lock is taken (no flock), so nothing stops a
// second server on the same database.
type serverLock struct{}

func lockDatabase(db string, workers int) (*serverLock, error) { return &serverLock{}, nil }
func (l *serverLock) reloaded(err error) error                 { return nil }
func (l *serverLock) Close() error                             { return nil }

func reloadServer(ctx context.Context, o options, stdout io.Writer) error {
	return errors.New("-reload: needs a Unix system")
}
