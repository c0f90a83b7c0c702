package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "8cd89817c85961da93f730e299155c653fe80892"},
		{Key: "vcs.time", Value: "2026-11-28T22:55:22Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tt := range []struct {
		name    string
		bi      *debug.BuildInfo
		stamped string
		version string
		shown   string // a line String must hold
	}{
		{"stamped wins", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: vcs}, "v9.9.9", "v9.9.9", "commit 8cd89817c85961da93f730e299155c653fe80892 (2026-11-28T22:55:22Z, with uncommitted changes)"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "", "v1.2.0", "v1.2.0"},
		{"pseudo-version from the checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128225522-8cd89817c859+dirty"}, Settings: vcs}, "", "v0.0.0-20261128225522-8cd89817c859+dirty", "commit 8cd8981"},
		{"commit only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "", "devel-20261128225522-8cd89817c859+dirty", "commit 8cd8981"},
		{"nothing recorded", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", Devel, "no commit recorded"},
		{"no build info", nil, "", Devel, "no commit recorded"},
	} {
		i := From(tt.bi, tt.stamped)
		if i.Version != tt.version || !strings.Contains(i.String(), tt.shown) {
			t.Errorf("%s: version %q, want %q; String:\n%s\nwant a line with %q", tt.name, i.Version, tt.version, i.String(), tt.shown)
		}
	}
}
