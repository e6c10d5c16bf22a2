package replenish

import (
	"os/exec"
	"strings"
	"testing"
)

// TestWorkflowSpeaksNeitherHTTPNorMCP keeps the workflow on the pure-core
// side: no caller's protocol reaches it, not even through a dependency.
func TestWorkflowSpeaksNeitherHTTPNorMCP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "net/http" || strings.HasPrefix(pkg, "github.com/modelcontextprotocol/") {
			t.Errorf("package replenish depends on %s", pkg)
		}
	}
}
