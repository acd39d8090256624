package cmdutil

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version describes the running binary from the build information the Go toolchain embeds:
// the module version, the VCS revision and commit time, whether the tree had uncommitted
// changes, and the Go version and platform. `go build` in a git checkout records all of it;
// a build without VCS information (-buildvcs=false, a source tarball) says so.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)\n"
	}
	return formatVersion(info)
}

func formatVersion(info *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", info.Main.Version)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("revision unknown (built without VCS information)\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", info.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
