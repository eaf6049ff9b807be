package main

import (
	"runtime"
	"runtime/debug"
)

// version is the module's version the build recorded and the Go version,
// for the JSON envelope.
func version() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return v + " (" + runtime.Version() + ")"
}
