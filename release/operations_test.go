package release_test

// docs/operations.md, run: every sh block against the released archive.

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// TestOperationsDocCommands runs every `sh` block of docs/operations.md in
// order against a running server; any other block kind except `console` is
// refused.
func TestOperationsDocCommands(t *testing.T) {
	s := distStamp(t)
	if runtime.GOOS+"/"+runtime.GOARCH != "linux/amd64" {
		t.Skip("the document's install commands name the linux/amd64 archive")
	}
	blocks := operationsShellBlocks(t)
	work := t.TempDir()
	for _, name := range []string{"SHA256SUMS", archiveName(s.version, "linux/amd64") + ".tar.gz"} {
		b, err := os.ReadFile(filepath.Join(s.dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, base, env := operationsServer(t, s, work)
	outputs := make([]string, len(blocks))
	for i, b := range blocks {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("block %d failed: %v\n%s\noutput:\n%s", i+1, err, b, out)
		}
		outputs[i] = string(out)
	}
	all := strings.Join(outputs, "\n")
	for _, want := range []string{
		"storelink-mcp " + s.version + " (commit " + s.commit, // the installed binary
		"\n401\n",                              // the revoked token
		`"breaker":"closed"`,                   // /readyz
		`"error_code":"WRITE_OUTCOME_UNKNOWN"`, // the audit trail
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the commands' output lacks %q:\n%s", want, all)
		}
	}
	if kr, _ := os.ReadFile(w.KeyringPath); !strings.Contains(string(kr), "new-key-for-store-47") {
		t.Errorf("the keyring was not replaced: %s", kr)
	}
	if _, err := os.Stat(w.KeyringPath + ".new"); !os.IsNotExist(err) {
		t.Error("the rotation left its temporary file behind")
	}
	// The server still takes the other holder's token.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+e2etest.TokenBrno)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		t.Error("revoking one token locked out another holder")
	}
}

// operationsShellBlocks returns docs/operations.md's sh blocks in order;
// blocks other than `console` and `nginx` are refused.
func operationsShellBlocks(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(e2etest.Path(t, "docs/operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n").FindAllStringSubmatch(string(doc), -1) {
		switch m[1] {
		case "sh":
			blocks = append(blocks, m[2])
		case "console", "nginx":
		default:
			t.Errorf("a %q block: commands go in sh blocks (run here) or console blocks (need systemd or Kubernetes); an nginx block holds configuration", m[1])
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("found %d sh blocks; the document has more", len(blocks))
	}
	return blocks
}

// operationsServer starts the HTTP server the document's commands act on,
// with a timed-out order in its ledger, and returns the world, base URL and
// the commands' environment.
func operationsServer(t *testing.T, s releaseStamp, work string) (*e2etest.World, string, []string) {
	t.Helper()
	w := e2etest.NewWorld(t)
	writer := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms"))
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 10 * time.Second})
	if c := e2etest.Code(writer.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("a hung POST gave %s", c)
	}
	w.Mock.Server.ClearFaults()
	writer.Stop()
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-team "+e2etest.TokenDairy+"\nbrno "+e2etest.TokenBrno+"\n", time.Now().Add(-time.Minute))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	home := filepath.Join(work, "home")
	env := append(os.Environ(), "HOME="+home, "PATH="+filepath.Join(home, ".local", "bin")+":"+os.Getenv("PATH"),
		"VERSION="+s.version, "KEYRING="+w.KeyringPath, "TOKENS="+tokens, "MCP_URL="+p.Base,
		"REVOKED_TOKEN="+e2etest.TokenDairy, "STATE_DB_PATH="+w.StatePath,
		// The released binary has no demo keyring to fall back on (ADR 0015).
		"UPSTREAM_BASE_URL="+w.Mock.URL, "STORELINK_KEYRING_FILE="+w.KeyringPath)
	return w, p.Base, env
}
