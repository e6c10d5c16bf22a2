package e2e_test

import (
	"net"
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

// freePort is a loopback port nobody listened on a moment ago: for a program
// that cannot report the port it picked (Prometheus), for a server whose
// public URL must be known before it starts (the OAuth resource identifier is
// configured, not guessed from requests), or for an address where nothing
// listens.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
