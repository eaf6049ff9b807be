//go:build !unix

package main

import "os"

const notifySocketEnv = "NOTIFY_SOCKET"

// Elsewhere there is no systemd.
func sdNotify(state string) error        { return nil }
func reloadingState() string             { return "RELOADING=1" }
func systemdListener() (*os.File, error) { return nil, nil }
