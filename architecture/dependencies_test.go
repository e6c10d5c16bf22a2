package architecture_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/storelinkclient"
)

// TestModuleDependencies keeps the graph the README draws: the mock
// StoreLink, which the toolkit's clients are checked against, depends on
// the contract only, never on the client or the server it checks; the
// public client, its semantic rules included, depends on no module of ours;
// the MCP server only on the client; the contract's own package on nothing,
// and its checker only on the client (for the rules the server applies).
func TestModuleDependencies(t *testing.T) {
	for pkg, allowed := range map[string][]string{
		"github.com/korral/storelink/mockstorelink":   {"github.com/korral/storelink/openapi"},
		"github.com/korral/storelink/storelinkclient": nil,
		// A package outside its module's root lists its own module.
		"github.com/korral/storelink/storelinkclient/rules": {"github.com/korral/storelink/storelinkclient"},
		"github.com/korral/storelink/mcpserver":             {"github.com/korral/storelink/storelinkclient"},
		"github.com/korral/storelink/openapi":               nil,
		"github.com/korral/storelink/openapi/contract":      {"github.com/korral/storelink/openapi", "github.com/korral/storelink/storelinkclient"},

		// The composition root and the program: never the mock, which
		// only a binary links (through its embedded-StoreLink hook).
		"github.com/korral/storelink/mcpserver/internal/app": {"github.com/korral/storelink/mcpserver", "github.com/korral/storelink/storelinkclient"},
		"github.com/korral/storelink/mcpserver/cli":          {"github.com/korral/storelink/mcpserver", "github.com/korral/storelink/storelinkclient"},
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.Module}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, mod := range strings.Fields(string(out)) {
			if !strings.HasPrefix(mod, "github.com/korral/storelink") || mod == pkg {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || mod == a
			}
			if !ok {
				t.Errorf("%s depends on %s", pkg, mod)
			}
		}
	}
}

// TestClientHistoryDaysIsTheContracts: the public client carries its own
// copy of the contract's history figure, as it imports no module of ours.
func TestClientHistoryDaysIsTheContracts(t *testing.T) {
	if storelinkclient.HistoryDays != openapi.HistoryDays {
		t.Fatalf("storelinkclient.HistoryDays is %d, the contract's is %d", storelinkclient.HistoryDays, openapi.HistoryDays)
	}
}
