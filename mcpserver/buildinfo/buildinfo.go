// Package buildinfo says which build of the toolkit is running. Release
// builds stamp Version, Commit and Date with the linker:
//
//	go build -ldflags "-X github.com/korral/storelink/mcpserver/buildinfo.Version=v1.2.3 \
//	  -X github.com/korral/storelink/mcpserver/buildinfo.Commit=abc1234 \
//	  -X github.com/korral/storelink/mcpserver/buildinfo.Date=2026-11-30T12:00:00Z" ./cmd/storelink-mcp
//
// An unstamped build falls back to the main module's version and VCS
// information the toolchain recorded.
package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Set by the linker in release builds; empty otherwise.
var (
	Version string
	Commit  string
	Date    string
)

// Info is a build's identity.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// devel is the version of a build that carries no version at all.
const devel = "(devel)"

// Get returns the running build's identity: the linker-stamped values where
// set, else the toolchain's build information, else "(devel)" and "unknown".
func Get() Info {
	return resolve(Version, Commit, Date, debug.ReadBuildInfo)
}

func resolve(version, commit, date string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: version, Commit: commit, Date: date}
	if bi, ok := read(); ok && bi != nil {
		if in.Version == "" && bi.Main.Version != "" {
			in.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Commit == "" {
					in.Commit = s.Value
				}
			case "vcs.time":
				if in.Date == "" {
					in.Date = s.Value
				}
			}
		}
	}
	if in.Version == "" {
		in.Version = devel
	}
	if in.Commit == "" {
		in.Commit = "unknown"
	}
	if in.Date == "" {
		in.Date = "unknown"
	}
	return in
}

// String renders the identity as one line for program's --version output,
// e.g. "storelink-mcp v1.2.3 (commit abc1234, built 2026-11-30T12:00:00Z)".
func (in Info) String(program string) string {
	return fmt.Sprintf("%s %s (commit %s, built %s)", program, in.Version, in.Commit, in.Date)
}
