//go:build !unix

package gameserver

import "errors"

// setReusePort fails: SO_REUSEPORT is a Unix socket option.
func setReusePort(uintptr) error {
	return errors.New("gameserver: SO_REUSEPORT is not supported on this system")
}
