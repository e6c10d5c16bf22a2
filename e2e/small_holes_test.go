package e2e_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
)

// TestSmallHolesAuthorizationHeader: the MCP endpoint reads a token only from
// exactly one Authorization value; the console refuses every bearer credential.
func TestSmallHolesAuthorizationHeader(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now().Add(-time.Hour))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens), "--stateless")
	for name, values := range map[string][]string{
		"a tab and a wrong token":     {"Bearer\t" + e2etest.TokenWrong},
		"bearer after basic":          {"Basic ZGFpcnk6eA==", "Bearer " + e2etest.TokenDairy},
		"basic after bearer":          {"Bearer " + e2etest.TokenDairy, "Basic ZGFpcnk6eA=="},
		"the token twice":             {"Bearer " + e2etest.TokenDairy, "Bearer " + e2etest.TokenDairy},
		"the token and a wrong one":   {"Bearer " + e2etest.TokenDairy, "Bearer " + e2etest.TokenWrong},
		"the token then an empty one": {"Bearer " + e2etest.TokenDairy, ""},
		"two words":                   {"Bearer " + e2etest.TokenDairy + " " + e2etest.TokenDairy},
	} {
		if got := postRPC(t, p.Base+"/mcp", toolCallBody, withAuthorization(values...)).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("MCP endpoint, %s: status %d, want 401", name, got)
		}
	}
	if n := w.Requests(allRequests); n != 0 {
		t.Fatalf("%d requests reached StoreLink behind a refused Authorization header", n)
	}
	// A single value is read, with a space or tab after the scheme, in any case.
	for _, v := range []string{"Bearer " + e2etest.TokenDairy, "Bearer\t" + e2etest.TokenDairy, "bearer " + e2etest.TokenDairy} {
		if got := postRPC(t, p.Base+"/mcp", toolCallBody, withAuthorization([]string{v}...)).StatusCode; got == http.StatusUnauthorized {
			t.Errorf("MCP endpoint, %q: status %d, want the token admitted", strings.Replace(v, e2etest.TokenDairy, "TOKEN", 1), got)
		}
	}
	denied := 0
	for _, l := range p.LogLines() {
		if l["msg"] == "auth.denied" && l["reason"] == "more than one Authorization header" {
			denied++
		}
	}
	if denied != 5 {
		t.Errorf("%d auth.denied lines name several Authorization headers; want 5", denied)
	}

	// The console: with and without an approver's session.
	env := approvalModeEnv(w)
	secret := addApprover(t, env, "jana", "--stores", "47")
	c := startConsoleProc(t, env)
	jana := newConsoleClient(t, c.url)
	if code, _ := jana.login("jana", secret); code != http.StatusOK {
		t.Fatalf("jana's login: %d", code)
	}
	for _, cl := range []*consoleClient{newConsoleClient(t, c.url), jana} {
		for name, values := range map[string][]string{
			"a tab after the scheme": {"Bearer\t" + e2etest.TokenDairy},
			"bearer after basic":     {"Basic amFuYTp4", "Bearer " + e2etest.TokenDairy},
			"folded by a proxy":      {"Basic amFuYTp4, Bearer " + e2etest.TokenDairy},
			"lower case":             {"bearer " + e2etest.TokenDairy},
		} {
			req, _ := http.NewRequest(http.MethodGet, c.url+"/", nil)
			req.Header["Authorization"] = values
			if code, body, _ := cl.do(req); code != http.StatusUnauthorized || strings.Contains(body, "inbox") {
				t.Errorf("console, %s (session %v): %d, want 401", name, cl == jana, code)
			}
		}
	}
	if code, _, u := jana.get("/"); code != http.StatusOK || u.Path == "/login" {
		t.Errorf("jana's own session without a bearer credential: %d at %s", code, u)
	}
}

// TestSmallHolesLooseSecretFilesAreRefused: a secret file others can read
// stops the server (exit 2) with the fix, and doctor says the same.
func TestSmallHolesLooseSecretFilesAreRefused(t *testing.T) {
	w := e2etest.NewWorld(t)
	key := filepath.Join(w.Dir, "consent.key")
	if err := os.WriteFile(key, []byte("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	env := w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=host", "HOST_CONSENT_KEY_FILE="+key)
	_, stderr, exit := e2etest.RunCLI(t, env, "serve", "--http", "127.0.0.1:0")
	if exit != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("serve with a 0644 key: exit %d, want 2 and one line:\n%s", exit, stderr)
	}
	for _, want := range []string{"HOST_CONSENT_KEY_FILE=", key, "mode 0644", "chmod 600 " + key} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's refusal does not say %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(w.StatePath); err == nil {
		t.Error("the refused server created its state database")
	}
	out, _, exit := e2etest.RunCLI(t, env, "doctor")
	if exit == 0 || !strings.Contains(out, "FAIL  configuration: HOST_CONSENT_KEY_FILE=") || !strings.Contains(out, "chmod 600 "+key) {
		t.Errorf("doctor: exit %d, want a FAIL naming the key and chmod 600:\n%s", exit, out)
	}

	// The keyring too, by the same rule, and at 0600 everything starts.
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(w.KeyringPath, 0o604); err != nil {
		t.Fatal(err)
	}
	_, stderr, exit = e2etest.RunCLI(t, env, "serve", "--http", "127.0.0.1:0")
	if exit != 2 || !strings.Contains(stderr, "STORELINK_KEYRING_FILE=") || !strings.Contains(stderr, "mode 0604") {
		t.Fatalf("serve with a 0604 keyring: exit %d:\n%s", exit, stderr)
	}
	if err := os.Chmod(w.KeyringPath, 0o600); err != nil {
		t.Fatal(err)
	}
	e2etest.StartHTTP(t, env).Stop()
}

// TestSmallHolesPromptsAreAudited: a prompts/get is an audit row with its
// call id, prompt, arguments and outcome.
func TestSmallHolesPromptsAreAudited(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.CS.GetPrompt(ctx, &mcp.GetPromptParams{Name: "korral_restock_gaps", Arguments: map[string]string{"sku": "8847291", "min_gap_units": "12", "store_ids": "47"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CS.GetPrompt(ctx, &mcp.GetPromptParams{Name: "korral_restock_gaps", Arguments: map[string]string{"sku": "butter", "min_gap_units": "12"}}); err == nil {
		t.Fatal("a bad sku was accepted")
	}
	p.Stop()

	rows := auditRows(t, w)
	if len(rows) != 2 {
		t.Fatalf("audit rows: %v; want the two prompts/get", rows)
	}
	ok, refused := rows[0], rows[1]
	if ok["tool"] != "prompt.korral_restock_gaps" || ok["outcome"] != "ok" || ok["store_id"] != "47" || ok["sku"] != "8847291" || ok["call_id"] == "" ||
		!strings.Contains(ok["summary"].(string), "sku=8847291, min_gap_units=12, store_ids=47") {
		t.Errorf("the served prompt's row: %v", ok)
	}
	if refused["tool"] != "prompt.korral_restock_gaps" || refused["outcome"] != "error" || refused["error_code"] != "INVALID_ARGUMENT" || refused["call_id"] == ok["call_id"] {
		t.Errorf("the refused prompt's row: %v", refused)
	}
	out, stderr, exit := e2etest.RunCLI(t, w.Env(), "audit", "--tool", "prompt.korral_restock_gaps")
	if exit != 0 || strings.Count(out, "prompt.korral_restock_gaps") != 2 {
		t.Errorf("audit --tool prompt.korral_restock_gaps: exit %d\n%s%s", exit, out, stderr)
	}
}
