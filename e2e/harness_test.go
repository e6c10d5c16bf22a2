package e2e_test

import (
	"net"
	"os"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver"
)

// TestMain removes the binary e2etest.Binary built, if any.
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

// freePort is a loopback port free a moment ago, for servers whose port must
// be known before they start.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
