// Package buildinfo carries the version stamped at link time (-ldflags -X).
package buildinfo

import "runtime/debug"

// Version is set by the Makefile: -X github.com/wagerail/wagerail/internal/platform/buildinfo.Version=….
var Version = "dev"

// Commit returns the VCS revision Go embedded, or "unknown".
func Commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
