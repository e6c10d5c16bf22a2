package storelinkclient

import (
	"runtime/debug"
	"testing"
)

func TestModuleVersion(t *testing.T) {
	info := func(main string, deps ...*debug.Module) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: main}, Deps: deps}, true
		}
	}
	for name, tc := range map[string]struct {
		read func() (*debug.BuildInfo, bool)
		want string
	}{
		"a dependency":       {info("v1.0.0", &debug.Module{Path: "golang.org/x/net", Version: "v0.1.0"}, &debug.Module{Path: modulePath, Version: "v0.2.0"}), "v0.2.0"},
		"a pseudo-version":   {info("", &debug.Module{Path: modulePath, Version: "v0.2.1-0.20261128063000-abcdef123456"}), "v0.2.1-0.20261128063000-abcdef123456"},
		"replaced by a path": {info("", &debug.Module{Path: modulePath, Version: "v0.0.0", Replace: &debug.Module{Path: "../storelinkclient"}}), "v0.0.0"},
		"not a dependency":   {info("v1.0.0"), "devel"},
		"the main module": {func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, true
		}, "devel"},
		"no build info":       {func() (*debug.BuildInfo, bool) { return nil, false }, "devel"},
		"not a product token": {info("", &debug.Module{Path: modulePath, Version: "v1 (x)"}), "devel"},
	} {
		if got := moduleVersion(tc.read); got != tc.want {
			t.Errorf("%s: moduleVersion = %q, want %q", name, got, tc.want)
		}
	}
}
