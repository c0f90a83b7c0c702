// Package buildinfo says which build of neardup is running, from what the
// Go toolchain records in the binary (runtime/debug.ReadBuildInfo): the
// module version, or the commit and its time when the binary was built
// from a checkout. A version stamped at link time (-ldflags "-X
// main.version=…", as the image builds do) takes precedence.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Devel is the version of a binary that carries neither a stamped nor a
// module version nor a commit: go run and go test build such binaries.
const Devel = "devel"

// Info describes a build.
type Info struct {
	// Version is the stamped version, else the module version ("v1.2.0",
	// or since Go 1.24 a pseudo-version naming the commit,
	// "v0.0.0-20261128225522-8cd89817c859+dirty"), else
	// "devel-TIME-COMMIT" from the commit alone, else Devel.
	Version string
	// Revision and Time are the commit the binary was built from and its
	// time (RFC 3339); Modified is set when the work tree had changes.
	Revision string
	Time     string
	Modified bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns the running binary's build information; stamped is the
// link-time version ("" when none was stamped).
func Read(stamped string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return From(bi, stamped)
}

// From returns the build information of bi (nil: none) and stamped.
func From(bi *debug.BuildInfo, stamped string) Info {
	i := Info{GoVersion: runtime.Version()}
	if bi != nil {
		i.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	switch {
	case stamped != "":
		i.Version = stamped
	case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		i.Version = bi.Main.Version
	case i.Revision != "":
		i.Version = "devel-" + compactTime(i.Time) + "-" + short(i.Revision)
		if i.Modified {
			i.Version += "+dirty"
		}
	default:
		i.Version = Devel
	}
	return i
}

// String is what neardup version prints: the version, then the commit,
// its time and the toolchain, or why there is no commit.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	switch {
	case i.Revision != "":
		fmt.Fprintf(&b, "\ncommit %s", i.Revision)
		var notes []string
		if i.Time != "" {
			notes = append(notes, i.Time)
		}
		if i.Modified {
			notes = append(notes, "with uncommitted changes")
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
	case i.Version == Devel:
		b.WriteString("\nno commit recorded: go run and go test do not record one; go build in a git checkout (make build) does")
	}
	fmt.Fprintf(&b, "\n%s %s/%s", i.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// short abbreviates a commit hash to 12 characters, as Go's
// pseudo-versions do.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// compactTime turns an RFC 3339 time into the yyyymmddhhmmss of Go's
// pseudo-versions ("" stays "").
func compactTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("20060102150405")
}
