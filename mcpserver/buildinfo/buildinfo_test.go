package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	withVCS := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{
			Main: debug.Module{Version: "v0.3.0"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "deadbeef"},
				{Key: "vcs.time", Value: "2026-11-01T00:00:00Z"},
			},
		}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name                  string
		version, commit, date string
		read                  func() (*debug.BuildInfo, bool)
		want                  Info
	}{
		{"stamped wins", "v1.2.3", "abc", "2026-11-30", withVCS, Info{"v1.2.3", "abc", "2026-11-30"}},
		{"toolchain fills gaps", "", "", "", withVCS, Info{"v0.3.0", "deadbeef", "2026-11-01T00:00:00Z"}},
		{"partly stamped", "v2.0.0", "", "", withVCS, Info{"v2.0.0", "deadbeef", "2026-11-01T00:00:00Z"}},
		{"nothing known", "", "", "", none, Info{"(devel)", "unknown", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.version, tt.commit, tt.date, tt.read); got != tt.want {
				t.Errorf("resolve() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	got := Info{"v1.2.3", "abc", "2026-11-30"}.String("storelink-mcp")
	if want := "storelink-mcp v1.2.3 (commit abc, built 2026-11-30)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
