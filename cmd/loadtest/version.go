package main

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is this build's version, as the go command records it in every
// binary (runtime/debug.ReadBuildInfo): the main module's version, then the
// commit (12 hex digits, "-dirty" for a modified work tree), its time and
// the Go version, e.g. "v0.0.0-20261120103000-1a2b3c4d5e6f (revision
// 1a2b3c4d5e6f, 2026-11-20T10:30:00Z, go1.26.8)", or "(devel) (go1.26.8)"
// for a build that recorded no commit (go run, a test binary).
func version() string {
	module, goVersion := "(devel)", runtime.Version()
	var parts []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			module = bi.Main.Version
		}
		if bi.GoVersion != "" {
			goVersion = bi.GoVersion
		}
		parts = vcsParts(bi.Settings)
	}
	return module + " (" + strings.Join(append(parts, goVersion), ", ") + ")"
}

// vcsParts are the revision and commit time the build recorded, if any.
func vcsParts(settings []debug.BuildSetting) []string {
	var rev, at string
	dirty := false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		parts = append(parts, "revision "+rev)
	}
	if at != "" {
		parts = append(parts, at)
	}
	return parts
}
