package e2e_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// claims override a token's default claims (e2etest.Issuer.Token).
type claims = map[string]any

// oauthServer is a server taking tokens from an issuer, shared by the OAuth test's steps.
type oauthServer struct {
	inst         tsInstall
	w            *e2etest.World
	iss          *e2etest.Issuer
	p            *e2etest.HTTPProc
	resource     string // the resource identifier: the public /mcp URL
	metadataURL  string // the protected resource metadata's URL
	ordersBefore int
	bad          map[string]string // bad tokens, by what is wrong with them
}

// post sends one raw JSON-RPC message with token in a 2025-11-25 session and
// returns the status, WWW-Authenticate and body.
func (o *oauthServer) post(t *testing.T, body, token string) (int, string, string) {
	t.Helper()
	return postRPC(t, o.p.Base+"/mcp", body, withToken(token), withRevision("2025-11-25")).statusChallengeBody()
}

// Tokens from an identity provider: the server, given only the issuer,
// admits tokens meant for it, records their subject, requires its own scope
// for writes, and tells a client without a good token where to get one.
func TestOAuthAccessTokensFromAnIdentityProvider(t *testing.T) {
	inst := findTSClient(t)
	for _, mode := range [][]string{nil, {"--stateless"}} {
		t.Run(fmt.Sprintf("serve%v", mode), func(t *testing.T) {
			o := startOAuthServer(t, inst, mode)
			for _, step := range []struct {
				name string
				run  func(*testing.T)
			}{
				{"metadata", o.metadata},
				{"no token points to the metadata", o.noToken},
				{"bad tokens", o.badTokens},
				{"valid token reads and writes", o.validToken},
				{"the subject is the requester", o.subjectIsRequester},
				{"read scope only: the write is refused with insufficient_scope", o.readScopeOnly},
				{"no read scope", o.noReadScope},
				{"an expired token sends the host to the issuer", o.expiredTokenRedirects},
				{"key rotation", o.keyRotation},
				{"the token file still admits its holders", o.tokenFileStillWorks},
			} {
				t.Run(step.name, step.run)
			}
			if n := len(o.w.Mock.Server.Orders()); n != o.ordersBefore+1 {
				t.Fatalf("StoreLink holds %d orders, want %d", n, o.ordersBefore+1)
			}
			if n := o.w.Requests(isCreate); n != 1 {
				t.Fatalf("%d order POSTs reached StoreLink, want the one confirmed with the write scope", n)
			}
		})
	}
}

// startOAuthServer starts the server with an issuer and a token file.
func startOAuthServer(t *testing.T, inst tsInstall, mode []string) *oauthServer {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	port := strconv.Itoa(freePort(t))
	public := "http://127.0.0.1:" + port
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true",
		"MCP_AUTH_TOKENS_FILE="+tokens), append([]string{"--http", "127.0.0.1:" + port}, mode...)...)
	resource := public + "/mcp"
	return &oauthServer{inst: inst, w: w, iss: iss, p: p, resource: resource, ordersBefore: len(w.Mock.Server.Orders()),
		metadataURL: public + "/.well-known/oauth-protected-resource/mcp",
		bad: map[string]string{
			"expired":          iss.Token(resource, claims{"exp": time.Now().Add(-5 * time.Minute).Unix(), "iat": time.Now().Add(-10 * time.Minute).Unix()}),
			"not yet valid":    iss.Token(resource, claims{"nbf": time.Now().Add(10 * time.Minute).Unix()}),
			"no expiry":        iss.Token(resource, claims{"exp": nil}),
			"wrong audience":   iss.Token("storelink-api", nil),
			"another resource": iss.Token("https://other.korral.example/mcp", nil),
			"wrong issuer":     iss.Token(resource, claims{"iss": "https://login.elsewhere.example"}),
			"alg none":         iss.Unsigned(resource),
			"HS256":            iss.HMACSigned(resource),
			"no subject":       iss.Token(resource, claims{"sub": nil}),
			"tampered":         tamper(iss.Token(resource, nil)),
		}}
}

func (o *oauthServer) metadata(t *testing.T) {
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(o.p.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", path, resp.StatusCode, err)
		}
		want := map[string]any{"resource": o.resource, "authorization_servers": []any{o.iss.URL()},
			"scopes_supported": []any{"storelink.read", "storelink.write"}, "bearer_methods_supported": []any{"header"}}
		for k, v := range want {
			if fmt.Sprint(meta[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v", path, k, meta[k], v)
			}
		}
	}
}

func (o *oauthServer) noToken(t *testing.T) {
	status, challenge, _ := o.post(t, initializeBody, "")
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+o.metadataURL+`"`) ||
		strings.Contains(challenge, "invalid_token") {
		t.Fatalf("no token: %d %q", status, challenge)
	}
}

// badTokens: every bad token gets 401 invalid_token and the metadata URL.
func (o *oauthServer) badTokens(t *testing.T) {
	for name, tok := range o.bad {
		status, challenge, body := o.post(t, toolCallBody, tok)
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
			!strings.Contains(challenge, `resource_metadata="`+o.metadataURL+`"`) {
			t.Errorf("%s: %d %q %s", name, status, challenge, body)
		}
	}
	// The official client, given such a token, cannot connect.
	for _, name := range []string{"expired", "wrong audience", "another resource", "alg none"} {
		if _, ready := startTSHTTP(t, o.inst, o.resource, o.bad[name], false); ready.Ready || ready.status() != http.StatusUnauthorized {
			t.Errorf("TS client with the %s token: ready=%v error=%+v", name, ready.Ready, ready.Error)
		}
	}
}

func (o *oauthServer) validToken(t *testing.T) {
	h, ready := startTSHTTP(t, o.inst, o.resource, o.iss.Token(o.resource, nil), false)
	if !ready.Ready || len(ready.Tools) != 5 {
		t.Fatalf("TS client with a valid token: %+v", ready)
	}
	if env := h.call("korral_list_authorized_stores", nil).envelope(t); env["ok"] != true {
		t.Fatalf("list stores: %v", env)
	}
	if env := h.call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}).envelope(t); env["ok"] != true {
		t.Fatalf("risk check: %v", env)
	}
	preview := h.call("korral_raise_replenishment_order", e2etest.Order(24)).envelope(t)
	key, _ := preview["data"].(map[string]any)["idempotency_key"].(string)
	raised := h.call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)).envelope(t)
	if raised["ok"] != true || raised["data"].(map[string]any)["mode"] != "raised" {
		t.Fatalf("confirm: %v", raised)
	}
	if n := len(o.w.Mock.Server.Orders()); n != o.ordersBefore+1 {
		t.Fatalf("StoreLink holds %d orders, want %d", n, o.ordersBefore+1)
	}
}

func (o *oauthServer) subjectIsRequester(t *testing.T) {
	if by := requestedBy(t, o.w.StatePath); len(by) != 1 || !isCaller(by[0], "oauth:jana.novak") {
		t.Fatalf("ledger requested_by: %q", by)
	}
	rows := auditRows(t, o.w)
	if len(rows) != 4 {
		t.Fatalf("audit rows: %v", rows)
	}
	for _, row := range rows {
		if c := fmt.Sprint(row["client"]); !isCaller(c, "oauth:jana.novak") {
			t.Fatalf("audit client %q, want oauth:jana.novak", c)
		}
	}
}

func (o *oauthServer) readScopeOnly(t *testing.T) {
	readOnly := o.iss.Token(o.resource, claims{"scope": "storelink.read", "sub": "ops-bot"})
	write := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"korral_raise_replenishment_order","arguments":{}}}`
	status, challenge, body := o.post(t, write, readOnly)
	if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) ||
		!strings.Contains(challenge, `scope="storelink.read storelink.write"`) || !strings.Contains(challenge, `resource_metadata="`+o.metadataURL+`"`) ||
		!strings.Contains(body, "storelink.write") {
		t.Fatalf("raw write with the read scope: %d %q %s", status, challenge, body)
	}
	// A batch hides nothing.
	if status, _, _ := o.post(t, "["+write+"]", readOnly); status != http.StatusForbidden {
		t.Fatalf("batched write with the read scope: %d", status)
	}
	h, ready := startTSHTTP(t, o.inst, o.resource, readOnly, false)
	if !ready.Ready {
		t.Fatalf("TS client with the read scope: %+v", ready)
	}
	if env := h.call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}).envelope(t); env["ok"] != true {
		t.Fatalf("risk check with the read scope: %v", env)
	}
	for _, args := range []map[string]any{e2etest.Order(24), e2etest.Order(24, "confirm", true, "idempotency_key", "k-read-only-0001")} {
		if r := h.call("korral_raise_replenishment_order", args); r.status() != http.StatusForbidden || !strings.Contains(r.Error.Message, "storelink.write") {
			t.Fatalf("write with the read scope: %+v", r)
		}
	}
	// The challenge names the missing scope for this resource.
	hp, ready := startTSHTTP(t, o.inst, o.resource, readOnly, true)
	if !ready.Ready {
		t.Fatalf("TS client with a provider: %+v", ready)
	}
	r := hp.call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "k-read-only-0002"))
	if r.Error == nil || r.Redirect == nil {
		t.Fatalf("step-up: %+v", r)
	}
	if u, err := url.Parse(*r.Redirect); err != nil || !strings.HasPrefix(*r.Redirect, o.iss.URL()+"/authorize?") ||
		u.Query().Get("scope") != "storelink.read storelink.write" || u.Query().Get("resource") != o.resource {
		t.Fatalf("step-up authorization URL: %s", *r.Redirect)
	}
	if n := len(o.w.Mock.Server.Orders()); n != o.ordersBefore+1 {
		t.Fatalf("StoreLink holds %d orders after refused writes, want %d", n, o.ordersBefore+1)
	}
	if es := requestedBy(t, o.w.StatePath); len(es) != 1 {
		t.Fatalf("refused writes left ledger entries: %q", es)
	}
	// Each refused write is in the audit trail, under the subject.
	refused := 0
	for _, row := range auditRows(t, o.w) {
		if isCaller(fmt.Sprint(row["client"]), "oauth:ops-bot") && row["tool"] == "korral_raise_replenishment_order" {
			if row["outcome"] != "error" || !strings.Contains(fmt.Sprint(row["summary"]), "insufficient_scope") {
				t.Fatalf("audit row of a refused write: %v", row)
			}
			refused++
		}
	}
	if refused != 5 {
		t.Fatalf("%d refused writes in the audit trail, want 5 (raw, batched, two from the client, one step-up)", refused)
	}
}

func (o *oauthServer) noReadScope(t *testing.T) {
	status, challenge, _ := o.post(t, initializeBody, o.iss.Token(o.resource, claims{"scope": "profile"}))
	if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope", scope="storelink.read"`) {
		t.Fatalf("token without storelink.read: %d %q", status, challenge)
	}
}

func (o *oauthServer) expiredTokenRedirects(t *testing.T) {
	_, ready := startTSHTTP(t, o.inst, o.resource, o.bad["expired"], true)
	if ready.Ready || ready.Redirect == nil || !strings.HasPrefix(*ready.Redirect, o.iss.URL()+"/authorize?") {
		t.Fatalf("expired token with a provider: %+v", ready)
	}
	if u, _ := url.Parse(*ready.Redirect); u.Query().Get("resource") != o.resource {
		t.Fatalf("authorization URL names another resource: %s", *ready.Redirect)
	}
}

func (o *oauthServer) keyRotation(t *testing.T) {
	reads := o.iss.Reads()
	o.iss.Rotate("k2")
	h, ready := startTSHTTP(t, o.inst, o.resource, o.iss.Token(o.resource, nil), false)
	if !ready.Ready {
		t.Fatalf("token of the rotated key: %+v\n%s", ready, o.p.Stderr.String())
	}
	if env := h.call("korral_list_authorized_stores", nil).envelope(t); env["ok"] != true {
		t.Fatalf("after rotation: %v", env)
	}
	if got := o.iss.Reads(); got != reads+1 {
		t.Fatalf("key set read %d times for the rotation, want once", got-reads)
	}
	// An unpublished kid is refused, and does not trigger another key set read so soon.
	if status, _, _ := o.post(t, initializeBody, o.iss.TokenWithKid(o.resource, "k9", nil)); status != http.StatusUnauthorized {
		t.Fatalf("unknown kid: %d", status)
	}
	if got := o.iss.Reads(); got != reads+1 {
		t.Fatalf("an unknown kid right after a reload read the key set again (%d reads)", got-reads)
	}
}

func (o *oauthServer) tokenFileStillWorks(t *testing.T) {
	cs := o.p.Connect(e2etest.TokenDairy, "file-agent")
	if env, err := e2etest.CallHTTP(t, cs, "korral_list_authorized_stores", nil); err != nil || env["ok"] != true {
		t.Fatalf("file token beside OAuth: %v %v", env, err)
	}
}

// A wrong or bogus issuer keeps the server from starting, with the reason.
func TestOAuthRefusesToStartWithoutTheIssuersKeys(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	for name, c := range map[string]struct {
		env  []string
		want string
	}{
		"issuer with a trailing slash": {[]string{"OAUTH_ISSUER=" + iss.URL() + "/", "MCP_PUBLIC_URL=http://127.0.0.1:1"}, "names the issuer"},
		"no metadata":                  {[]string{"OAUTH_ISSUER=" + w.Mock.URL, "MCP_PUBLIC_URL=http://127.0.0.1:1"}, "no issuer metadata found"},
		"no resource identifier":       {[]string{"OAUTH_ISSUER=" + iss.URL()}, "MCP_PUBLIC_URL"},
		"plain http off loopback":      {[]string{"OAUTH_ISSUER=http://login.korral.example", "MCP_PUBLIC_URL=http://127.0.0.1:1"}, "must use https"},
	} {
		_, stderr, exit := e2etest.RunCLI(t, w.Env(c.env...), "serve", "--http", "127.0.0.1:0")
		if exit != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr:\n%s", name, exit, stderr)
		}
	}
}

// An approver cannot release an order staged under her own token; another approver can.
func TestOAuthSubjectCannotApproveItsOwnOrder(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	const public = "https://mcp.korral.example"
	env := w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	jana := addApprover(t, env, "jana.novak")
	petr := addApprover(t, env, "Petr Dvořák")
	p := e2etest.StartHTTP(t, env)
	cs := p.Connect(iss.Token(public+"/mcp", nil), "oauth-agent")
	preview, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24))
	if err != nil {
		t.Fatal(err)
	}
	key := preview["data"].(map[string]any)["idempotency_key"]
	staged, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	if err != nil || staged["data"].(map[string]any)["mode"] != "pending_approval" {
		t.Fatalf("staging: %v %v", staged, err)
	}
	id := fmt.Sprint(staged["data"].(map[string]any)["approval_id"])
	_, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+jana), "approvals", "approve", id, "--approver", "jana.novak")
	if exit != 1 || !strings.Contains(stderr, "cannot also approve it") || !strings.Contains(stderr, "OAuth subject jana.novak") {
		t.Fatalf("the requester approving: exit %d: %s", exit, stderr)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d order POSTs after the refused self-approval", n)
	}
	if out, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+petr), "approvals", "approve", id, "--approver", "Petr Dvořák"); exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("another approver: exit %d: %s %s", exit, out, stderr)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d order POSTs, want 1", n)
	}
}

// While a key set read for an unknown key hangs, valid tokens are still
// answered, and the unknown key gets 401 once the read ends (ADR 0008).
func TestOAuthValidTokensDoNotWaitForAKeySetRead(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public))
	valid := iss.Token(resource, nil)
	cs := p.Connect(valid, "oauth-agent")
	before := iss.Reads()

	entered, release := iss.Block()
	type answer struct {
		status          int
		challenge, body string
	}
	unknown := make(chan answer, 1)
	go func() {
		status, challenge, body := postRPC(t, p.Base+"/mcp", toolCallBody, withToken(iss.TokenWithKid(resource, "made-up", nil)), withRevision("2025-11-25")).statusChallengeBody()
		unknown <- answer{status, challenge, body}
	}()
	<-entered // the server is reading the key set for the unknown key

	for i := range 5 {
		env, err := e2etest.CallHTTP(t, cs, "korral_list_authorized_stores", nil)
		if err != nil || env["ok"] != true {
			t.Fatalf("valid call %d while the key set read hangs: %v %v", i, env, err)
		}
	}
	if status, _, body := postRPC(t, p.Base+"/mcp", initializeBody, withToken(valid), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusOK {
		t.Fatalf("a new session with a valid token while the key set read hangs: %d %s", status, body)
	}
	select {
	case a := <-unknown:
		t.Fatalf("the unknown key was answered before its key set read ended: %+v", a)
	default:
	}
	if n := iss.Abandoned(); n != 0 {
		t.Fatalf("the server gave up %d key set read(s) before the valid calls were answered", n)
	}
	release()
	a := <-unknown
	if a.status != http.StatusUnauthorized || !strings.Contains(a.challenge, `error="invalid_token"`) {
		t.Fatalf("the unknown key after the read: %d %q %s", a.status, a.challenge, a.body)
	}
	if n := iss.Reads() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
}

// An unreadable key set for an unknown key gets 503 with Retry-After, never
// 500; tokens with a known key keep working.
func TestOAuthProviderDownIsServiceUnavailable(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public))
	iss.SetDown(true)
	a := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.TokenWithKid(resource, "k2", nil)))
	if a.StatusCode != http.StatusServiceUnavailable || a.Header.Get("Retry-After") == "" {
		t.Fatalf("unknown key, provider down: %d Retry-After %q: %s", a.StatusCode, a.Header.Get("Retry-After"), a.Body)
	}
	if status, _, body := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.Token(resource, nil)), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusOK {
		t.Fatalf("a known key with the provider down: %d %s", status, body)
	}
}

// A token's storelink_stores claim limits every tool and prompt to those
// stores before StoreLink is asked; a token without it sees all the keyring's.
func TestOAuthStoreClaimLimitsATokenToItsStores(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := e2etest.NewIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true"))
	cs := p.Connect(iss.Token(resource, claims{"storelink_stores": []string{"47"}}), "jana-agent")

	listed, err := e2etest.CallHTTP(t, cs, "korral_list_authorized_stores", nil)
	if err != nil || listed["ok"] != true {
		t.Fatalf("list stores: %v %v", listed, err)
	}
	data := listed["data"].(map[string]any)
	stores := data["stores"].([]any)
	if len(stores) != 1 || stores[0].(map[string]any)["store_id"] != "47" || data["count_total_available"] != float64(1) {
		t.Fatalf("a token for 47 lists: %v", data)
	}

	to102 := func(r mockstorelink.RequestRecord) bool { return r.StoreID == "102" }
	before := w.Requests(to102)
	for tool, args := range map[string]map[string]any{
		"korral_check_stock_risk":          {"sku": mockstorelink.SKUButter, "store_id": "102"},
		"korral_list_recent_sales":         {"sku": mockstorelink.SKUButter, "store_id": "102"},
		"korral_get_order_status":          {"store_id": "102", "order_id": "ORD-1"},
		"korral_raise_replenishment_order": e2etest.Order(24, "store_id", "102"),
	} {
		env, err := e2etest.CallHTTP(t, cs, tool, args)
		if err != nil || env["ok"] != false || env["error"].(map[string]any)["code"] != "STORE_NOT_AUTHORIZED" {
			t.Fatalf("%s at 102: %v %v", tool, env, err)
		}
	}
	// Among several stores, 102 is refused on its own and 47 answered.
	env, err := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"47", "102"}})
	if err != nil || env["ok"] != true {
		t.Fatalf("risk at 47 and 102: %v %v", env, err)
	}
	per := env["data"].(map[string]any)["stores"].([]any)
	if len(per) != 2 || per[0].(map[string]any)["error"] != nil || per[1].(map[string]any)["error"].(map[string]any)["code"] != "STORE_NOT_AUTHORIZED" {
		t.Fatalf("risk at 47 and 102: %v", per)
	}
	// A chain sweep is the token's stores, never the keyring's.
	env, err = e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"all"}})
	if err != nil || env["ok"] != true || env["data"].(map[string]any)["sweep"].(map[string]any)["stores_checked"] != 1.0 {
		t.Fatalf("a sweep with a token for 47: %v %v", env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "korral_orders_since", Arguments: map[string]string{"sku": mockstorelink.SKUButter, "store_id": "102"}}); err == nil || !strings.Contains(err.Error(), "STORE_NOT_AUTHORIZED") {
		t.Fatalf("orders_since prompt at 102: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "korral_restock_gaps", Arguments: map[string]string{"sku": mockstorelink.SKUButter, "store_ids": "102", "min_gap_units": "1"}}); err == nil || !strings.Contains(err.Error(), "STORE_NOT_AUTHORIZED") {
		t.Fatalf("restock_gaps prompt at 102: %v", err)
	}
	if n := w.Requests(to102) - before; n != 0 {
		t.Fatalf("%d StoreLink requests for store 102 from a token limited to 47", n)
	}

	// Without the claim: the whole keyring.
	all := p.Connect(iss.Token(resource, nil), "buyer-agent")
	listed, err = e2etest.CallHTTP(t, all, "korral_list_authorized_stores", nil)
	if err != nil || listed["data"].(map[string]any)["count_total_available"] != float64(2) {
		t.Fatalf("a token without storelink_stores: %v %v", listed, err)
	}
	// A claim the server cannot read is refused, not read as no limit.
	if status, challenge, _ := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.Token(resource, claims{"storelink_stores": "47"})), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusUnauthorized || !strings.Contains(challenge, "invalid_token") {
		t.Fatalf("storelink_stores as a string: %d %q", status, challenge)
	}
}

// requestedBy reads each ledger entry's requester from the state file.
func requestedBy(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT requested_by FROM entries ORDER BY created_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// isCaller reports whether a recorded caller is caller, exactly or followed
// by the client's name or the session.
func isCaller(recorded, caller string) bool {
	rest, ok := strings.CutPrefix(recorded, caller)
	return ok && (rest == "" || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, "/"))
}

// tamper changes the token's payload (its subject) and keeps the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), "jana.novak", "petr.dvora", 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}
