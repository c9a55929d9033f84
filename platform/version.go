package platform

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Build describes the running binary, read from the build information the
// Go toolchain embeds (docs/operations.md, "Version"): no -ldflags step is
// needed, so a plain `go build` or `go install` reports the same as a
// release build.
type Build struct {
	Version    string `json:"version"`    // the module version: a tag, a pseudo-version, or "(devel)"
	Commit     string `json:"commit"`     // vcs.revision; "" when built outside a checkout
	CommitTime string `json:"commitTime"` // vcs.time, the commit's time: a reproducible build has no clock of its own
	Modified   bool   `json:"modified"`   // the checkout had uncommitted changes
	GoVersion  string `json:"goVersion"`
}

// BuildInfo returns what the binary knows about its own build.
func BuildInfo() Build {
	b := Build{Version: "(devel)", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `herald version` prints.
func (b Build) String() string {
	s := "herald " + b.Version
	if b.Commit != "" {
		s += " commit " + b.Commit
		if b.Modified {
			s += " (modified)"
		}
	}
	if b.CommitTime != "" {
		s += " committed " + b.CommitTime
	}
	return fmt.Sprintf("%s %s %s/%s", s, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}
