package e2etest

import (
	"os"
	"os/exec"
	"testing"
)

// NeedTool finds an external program, skipping the test without it
// locally and failing under CI, which must run it (.ci/run installs it).
func NeedTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not on PATH, and CI must run this test: apt-get install -y %s", name, pkg)
		}
		t.Skipf("%s is not on PATH (apt-get install -y %s)", name, pkg)
	}
	return p
}
