//go:build !linux

package gameserver

import "errors"

// Without Linux's socket filters and sock_diag, Shutdown accepts what is
// queued and closes the listener at once (see handshake_linux.go).

func refuseSYN(int) error {
	return errors.New("gameserver: no socket filter to stop handshakes on this system")
}

func forgetSYNFilter(int) {}

func unreadBytes(int) int { return 0 }

func acceptQueueLen(int) int { return 0 }

func handshaking(int) (bool, error) { return false, nil }
