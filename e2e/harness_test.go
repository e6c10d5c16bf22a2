package e2e_test

import (
	"os"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver"
)

// TestMain removes the storelink-mcp that e2etest.Binary built, if a test
// asked for it.
func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }

func data(t *testing.T, env map[string]any) map[string]any {
	t.Helper()
	d, ok := env["data"].(map[string]any)
	if !ok {
		t.Fatalf("no data in %v", env)
	}
	return d
}

// plainText unwraps a value the server marked as untrusted data.
func plainText(v any) string {
	s, _ := v.(string)
	t, _ := mcpserver.UntrustedText(s)
	return t
}

func num(v any) float64 { f, _ := v.(float64); return f }
