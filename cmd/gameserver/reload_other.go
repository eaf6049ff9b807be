//go:build !unix

package main

import (
	"context"
	"errors"
	"io"
)

func reloadServer(ctx context.Context, o options, stdout io.Writer) error {
	return errors.New("-reload: needs a Unix system")
}
