// Package version tells which build of the program is running, from what
// the Go toolchain recorded in the binary (runtime/debug.ReadBuildInfo):
// the module version, the VCS revision and the Go version. Nothing needs
// to be set at link time.
package version

import (
	"runtime"
	"runtime/debug"
)

// Info describes one build.
type Info struct {
	// Version is the main module's version as the toolchain recorded it:
	// a tag such as "v1.2.0" for `go install module@v1.2.0`, a pseudo-version,
	// or "(devel)" for a build from a work tree.
	Version string
	// Revision is the VCS commit the binary was built from, with "-dirty"
	// appended when the work tree had changes; "unknown" when the build
	// recorded none (go build -buildvcs=false, go run, go test).
	Revision string
	// GoVersion is the Go release that built the binary ("go1.26.0").
	GoVersion string
}

// Get returns the running binary's build information. Fields the binary
// does not record are "unknown" (Version, Revision) or runtime.Version()
// (GoVersion).
func Get() Info {
	info := Info{Version: "unknown", Revision: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && info.Revision != "unknown" {
		info.Revision += "-dirty"
	}
	return info
}

// String is the one-line form a -version flag prints:
// "v1.2.0 (revision 1f2e3d4, go1.26.0)".
func (i Info) String() string {
	return i.Version + " (revision " + i.Revision + ", " + i.GoVersion + ")"
}
