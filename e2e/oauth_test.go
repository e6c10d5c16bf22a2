package e2e_test

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// An identity provider on loopback, as Korral's IT runs one: it publishes
// RFC 8414 metadata and a key set over HTTP, signs access tokens with keys
// generated here, and rotates them on demand. The server under test knows
// nothing of it but its issuer URL.
type testIssuer struct {
	t   *testing.T
	srv *httptest.Server
	// jwksReads counts the key set requests, so a test sees when the
	// server read it again.
	jwksReads atomic.Int32
	// jwksDown answers the key set with 503.
	jwksDown atomic.Bool
	// jwksAbandoned counts key set requests the server gave up on while
	// they were held (block).
	jwksAbandoned atomic.Int32

	mu        sync.Mutex
	published []issuerKey
	signing   issuerKey
	// hold, when set, keeps every key set request waiting until it is
	// closed; entered receives one value per request held.
	hold, entered chan struct{}
}

type issuerKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	iss := &testIssuer{t: t}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss.signing = issuerKey{kid: "k1", alg: jose.ES256, priv: ec}
	iss.published = []issuerKey{iss.signing}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		base := iss.URL()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           base,
			"authorization_endpoint":           base + "/authorize",
			"token_endpoint":                   base + "/token",
			"jwks_uri":                         base + "/jwks",
			"response_types_supported":         []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"},
			"scopes_supported":                 []string{"storelink.read", "storelink.write"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.jwksReads.Add(1)
		iss.mu.Lock()
		hold, entered := iss.hold, iss.entered
		iss.mu.Unlock()
		if hold != nil {
			entered <- struct{}{}
			select {
			case <-hold:
			case <-r.Context().Done():
				iss.jwksAbandoned.Add(1)
				return
			}
		}
		if iss.jwksDown.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		iss.mu.Lock()
		var set jose.JSONWebKeySet
		for _, k := range iss.published {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
		}
		iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	// Started only once iss.srv is set, so the handlers that read it run
	// after that write (NewServer would already be serving).
	iss.srv = httptest.NewUnstartedServer(mux)
	iss.srv.Start()
	t.Cleanup(iss.srv.Close)
	return iss
}

// URL is the issuer identifier.
func (i *testIssuer) URL() string { return i.srv.URL }

// block makes the key set hang: every request for it waits (and is
// reported on entered) until release is called.
func (i *testIssuer) block() (entered <-chan struct{}, release func()) {
	i.mu.Lock()
	defer i.mu.Unlock()
	hold, in := make(chan struct{}), make(chan struct{}, 100)
	i.hold, i.entered = hold, in
	var once sync.Once
	release = func() {
		once.Do(func() {
			i.mu.Lock()
			i.hold, i.entered = nil, nil
			i.mu.Unlock()
			close(hold)
		})
	}
	i.t.Cleanup(release) // runs before the issuer's Close, which waits for handlers
	return in, release
}

// withKid is a valid token for audience signed with the current key but
// naming another key id, one the key set does not hold.
func (i *testIssuer) withKid(audience, kid string) string {
	i.t.Helper()
	i.mu.Lock()
	k := i.signing
	i.mu.Unlock()
	k.kid = kid
	return i.mintWith(k, audience, nil)
}

// rotate replaces the signing key by a new RSA key under a new kid, and
// withdraws the old one from the key set.
func (i *testIssuer) rotate(kid string) {
	i.t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		i.t.Fatal(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.signing = issuerKey{kid: kid, alg: jose.RS256, priv: k}
	i.published = []issuerKey{i.signing}
}

// claims are an access token's claims; mint fills the defaults.
type claims map[string]any

// mint signs claims with the current key, over defaults for a valid token
// for audience: this issuer, subject jana.novak, both scopes, five minutes.
func (i *testIssuer) mint(audience string, over claims) string {
	i.t.Helper()
	i.mu.Lock()
	k := i.signing
	i.mu.Unlock()
	return i.mintWith(k, audience, over)
}

func (i *testIssuer) mintWith(k issuerKey, audience string, over claims) string {
	i.t.Helper()
	now := time.Now()
	c := claims{"iss": i.URL(), "aud": audience, "sub": "jana.novak", "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "storelink.read storelink.write", "client_id": "ts-sdk-host"}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	opts := (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.kid)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

// unsigned is a token with alg "none": claims a valid token would carry,
// and no signature.
func (i *testIssuer) unsigned(audience string) string {
	valid := i.mint(audience, nil)
	payload := strings.Split(valid, ".")[1]
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1","typ":"at+jwt"}`))
	return header + "." + payload + "."
}

// hmacSigned is a valid token's claims signed with HS256 under the
// issuer's kid, as an attacker who treats a key as a shared secret would.
func (i *testIssuer) hmacSigned(audience string) string {
	i.t.Helper()
	now := time.Now()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("a-shared-secret-of-32-characters")},
		(&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(map[string]any{"iss": i.URL(), "aud": audience, "sub": "mallory",
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "storelink.read storelink.write"}).Serialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

// tsHTTPHost is the TypeScript SDK client (conformance/tsclient/http.mjs)
// connected to a running server over Streamable HTTP with a token.
type tsHTTPHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *e2etest.SyncBuffer
	nextID int
}

// tsHTTPReply is one line of the driver: a reply, or the readiness line.
type tsHTTPReply struct {
	tsReply
	Ready    bool             `json:"ready"`
	Tools    []map[string]any `json:"tools"`
	Redirect *string          `json:"redirect"`
}

// startTSHTTP starts the driver against url with token; provider says
// whether the token comes from an OAuth provider (which runs the client's
// discovery on a 401 or 403) or from a fixed Authorization header. It
// returns the readiness line.
func startTSHTTP(t *testing.T, inst tsInstall, url, token string, provider bool) (*tsHTTPHost, tsHTTPReply) {
	t.Helper()
	work := stageTSScript(t, inst, "http.mjs")
	cfg, _ := json.Marshal(map[string]any{"url": url, "token": token, "provider": provider})
	cmd := exec.Command(inst.node, filepath.Join(work, "http.mjs"), string(cfg))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	h := &tsHTTPHost{t: t, cmd: cmd, stderr: &e2etest.SyncBuffer{}, lines: make(chan string, 16)}
	cmd.Stderr = h.stderr
	var err error
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = h.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return h, h.next()
}

func (h *tsHTTPHost) next() tsHTTPReply {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("the TypeScript client exited\nstderr:\n%s", h.stderr.String())
		}
		var r tsHTTPReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			h.t.Fatalf("driver line %q: %v", line, err)
		}
		return r
	case <-time.After(60 * time.Second):
		h.t.Fatalf("the TypeScript client did not answer in 60 s\nstderr:\n%s", h.stderr.String())
	}
	return tsHTTPReply{}
}

// call runs one tools/call and returns the driver's reply.
func (h *tsHTTPHost) call(name string, args map[string]any) tsHTTPReply {
	h.t.Helper()
	h.nextID++
	b, _ := json.Marshal(map[string]any{"id": h.nextID, "name": name, "arguments": args})
	if _, err := h.stdin.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
	return h.next()
}

// status is the HTTP status the client threw with (its error code), or 0.
func (r tsHTTPReply) status() int {
	if r.Error == nil || r.Error.Code == nil {
		return 0
	}
	return *r.Error.Code
}

// envelope decodes the tool's JSON envelope from a reply.
func (r tsHTTPReply) envelope(t *testing.T) map[string]any {
	t.Helper()
	if r.Error != nil || r.Result == nil || len(r.Result.Content) == 0 {
		t.Fatalf("no result: %+v", r)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(r.Result.Content[0]["text"])), &env); err != nil {
		t.Fatalf("not an envelope: %v", r.Result.Content[0])
	}
	return env
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

// Story: Korral's IT issues buyers' agents access tokens from its identity
// provider instead of a line in a token file each. The server, told only
// the issuer, takes its keys from the issuer's metadata, admits the tokens
// meant for it, records their subject as the requester, keeps the write
// behind its own scope, and tells a client that has no (good) token where
// to get one.
func TestOAuthAccessTokensFromAnIdentityProvider(t *testing.T) {
	inst := findTSClient(t)
	for _, mode := range [][]string{nil, {"--stateless"}} {
		t.Run(fmt.Sprintf("serve%v", mode), func(t *testing.T) { testOAuth(t, inst, mode) })
	}
}

func testOAuth(t *testing.T, inst tsInstall, mode []string) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
	port := strconv.Itoa(freePort(t))
	public := "http://127.0.0.1:" + port
	resource := public + "/mcp"
	metadataURL := public + "/.well-known/oauth-protected-resource/mcp"
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true",
		"MCP_AUTH_TOKENS_FILE="+tokens), append([]string{"--http", "127.0.0.1:" + port}, mode...)...)
	ordersBefore := len(w.Mock.Server.Orders())

	t.Run("metadata", func(t *testing.T) {
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			resp, err := http.Get(p.Base + path)
			if err != nil {
				t.Fatal(err)
			}
			var meta map[string]any
			err = json.NewDecoder(resp.Body).Decode(&meta)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, %v", path, resp.StatusCode, err)
			}
			want := map[string]any{"resource": resource, "authorization_servers": []any{iss.URL()},
				"scopes_supported": []any{"storelink.read", "storelink.write"}, "bearer_methods_supported": []any{"header"}}
			for k, v := range want {
				if fmt.Sprint(meta[k]) != fmt.Sprint(v) {
					t.Errorf("%s: %s = %v, want %v", path, k, meta[k], v)
				}
			}
		}
	})

	t.Run("no token points to the metadata", func(t *testing.T) {
		status, challenge, _ := postRPC(t, p.Base+"/mcp", initializeBody, withRevision("2025-11-25")).statusChallengeBody()
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+metadataURL+`"`) ||
			strings.Contains(challenge, "invalid_token") {
			t.Fatalf("no token: %d %q", status, challenge)
		}
	})

	// Every bad token is refused with 401 invalid_token and the metadata
	// URL, before anything runs.
	other := iss.mint("https://other.korral.example/mcp", nil)
	bad := map[string]string{
		"expired":          iss.mint(resource, claims{"exp": time.Now().Add(-5 * time.Minute).Unix(), "iat": time.Now().Add(-10 * time.Minute).Unix()}),
		"not yet valid":    iss.mint(resource, claims{"nbf": time.Now().Add(10 * time.Minute).Unix()}),
		"no expiry":        iss.mint(resource, claims{"exp": nil}),
		"wrong audience":   iss.mint("storelink-api", nil),
		"another resource": other,
		"wrong issuer":     iss.mint(resource, claims{"iss": "https://login.elsewhere.example"}),
		"alg none":         iss.unsigned(resource),
		"HS256":            iss.hmacSigned(resource),
		"no subject":       iss.mint(resource, claims{"sub": nil}),
		"tampered":         tamper(iss.mint(resource, nil)),
	}
	t.Run("bad tokens", func(t *testing.T) {
		for name, tok := range bad {
			status, challenge, body := postRPC(t, p.Base+"/mcp", toolCallBody, withToken(tok), withRevision("2025-11-25")).statusChallengeBody()
			if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
				!strings.Contains(challenge, `resource_metadata="`+metadataURL+`"`) {
				t.Errorf("%s: %d %q %s", name, status, challenge, body)
			}
		}
		// The official client, given such a token, cannot connect.
		for _, name := range []string{"expired", "wrong audience", "another resource", "alg none"} {
			if _, ready := startTSHTTP(t, inst, resource, bad[name], false); ready.Ready || ready.status() != http.StatusUnauthorized {
				t.Errorf("TS client with the %s token: ready=%v error=%+v", name, ready.Ready, ready.Error)
			}
		}
	})

	var subject = "jana.novak"
	t.Run("valid token reads and writes", func(t *testing.T) {
		h, ready := startTSHTTP(t, inst, resource, iss.mint(resource, nil), false)
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
		if n := len(w.Mock.Server.Orders()); n != ordersBefore+1 {
			t.Fatalf("StoreLink holds %d orders, want %d", n, ordersBefore+1)
		}
	})

	t.Run("the subject is the requester", func(t *testing.T) {
		by := requestedBy(t, w.StatePath)
		if len(by) != 1 || !isCaller(by[0], "oauth:"+subject) {
			t.Fatalf("ledger requested_by: %q", by)
		}
		var clients []string
		for _, row := range auditRows(t, w) {
			clients = append(clients, fmt.Sprint(row["client"]))
		}
		if len(clients) != 4 {
			t.Fatalf("audit rows: %q", clients)
		}
		for _, c := range clients {
			if !isCaller(c, "oauth:"+subject) {
				t.Fatalf("audit client %q, want oauth:%s", c, subject)
			}
		}
	})

	t.Run("read scope only: the write is refused with insufficient_scope", func(t *testing.T) {
		readOnly := iss.mint(resource, claims{"scope": "storelink.read", "sub": "ops-bot"})
		status, challenge, body := postRPC(t, p.Base+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"korral_raise_replenishment_order","arguments":{}}}`, withToken(readOnly), withRevision("2025-11-25")).statusChallengeBody()
		if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) ||
			!strings.Contains(challenge, `scope="storelink.read storelink.write"`) || !strings.Contains(challenge, `resource_metadata="`+metadataURL+`"`) ||
			!strings.Contains(body, "storelink.write") {
			t.Fatalf("raw write with the read scope: %d %q %s", status, challenge, body)
		}
		// A batch hides nothing.
		if status, _, _ := postRPC(t, p.Base+"/mcp", `[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"korral_raise_replenishment_order","arguments":{}}}]`, withToken(readOnly), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusForbidden {
			t.Fatalf("batched write with the read scope: %d", status)
		}
		h, ready := startTSHTTP(t, inst, resource, readOnly, false)
		if !ready.Ready {
			t.Fatalf("TS client with the read scope: %+v", ready)
		}
		if env := h.call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}).envelope(t); env["ok"] != true {
			t.Fatalf("risk check with the read scope: %v", env)
		}
		for _, args := range []map[string]any{e2etest.Order(24), e2etest.Order(24, "confirm", true, "idempotency_key", "k-read-only-0001")} {
			r := h.call("korral_raise_replenishment_order", args)
			if r.status() != http.StatusForbidden || !strings.Contains(r.Error.Message, "storelink.write") {
				t.Fatalf("write with the read scope: %+v", r)
			}
		}
		// The host that signs its user in reads the challenge and would
		// ask the issuer for the missing scope, for this resource.
		hp, ready := startTSHTTP(t, inst, resource, readOnly, true)
		if !ready.Ready {
			t.Fatalf("TS client with a provider: %+v", ready)
		}
		r := hp.call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "k-read-only-0002"))
		if r.Error == nil || r.Redirect == nil {
			t.Fatalf("step-up: %+v", r)
		}
		u, err := url.Parse(*r.Redirect)
		if err != nil || !strings.HasPrefix(*r.Redirect, iss.URL()+"/authorize?") ||
			u.Query().Get("scope") != "storelink.read storelink.write" || u.Query().Get("resource") != resource {
			t.Fatalf("step-up authorization URL: %s", *r.Redirect)
		}
		if n := len(w.Mock.Server.Orders()); n != ordersBefore+1 {
			t.Fatalf("StoreLink holds %d orders after refused writes, want %d", n, ordersBefore+1)
		}
		if es := requestedBy(t, w.StatePath); len(es) != 1 {
			t.Fatalf("refused writes left ledger entries: %q", es)
		}
		// Each refused write is in the audit trail, under the subject.
		refused := 0
		for _, row := range auditRows(t, w) {
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
	})

	t.Run("no read scope", func(t *testing.T) {
		status, challenge, _ := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.mint(resource, claims{"scope": "profile"})), withRevision("2025-11-25")).statusChallengeBody()
		if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope", scope="storelink.read"`) {
			t.Fatalf("token without storelink.read: %d %q", status, challenge)
		}
	})

	t.Run("an expired token sends the host to the issuer", func(t *testing.T) {
		_, ready := startTSHTTP(t, inst, resource, bad["expired"], true)
		if ready.Ready || ready.Redirect == nil || !strings.HasPrefix(*ready.Redirect, iss.URL()+"/authorize?") {
			t.Fatalf("expired token with a provider: %+v", ready)
		}
		if u, _ := url.Parse(*ready.Redirect); u.Query().Get("resource") != resource {
			t.Fatalf("authorization URL names another resource: %s", *ready.Redirect)
		}
	})

	t.Run("key rotation", func(t *testing.T) {
		reads := iss.jwksReads.Load()
		iss.rotate("k2")
		h, ready := startTSHTTP(t, inst, resource, iss.mint(resource, nil), false)
		if !ready.Ready {
			t.Fatalf("token of the rotated key: %+v\n%s", ready, p.Stderr.String())
		}
		if env := h.call("korral_list_authorized_stores", nil).envelope(t); env["ok"] != true {
			t.Fatalf("after rotation: %v", env)
		}
		if got := iss.jwksReads.Load(); got != reads+1 {
			t.Fatalf("key set read %d times for the rotation, want once", got-reads)
		}
		// A kid the issuer never published: refused, and the key set is
		// not read again so soon (a flood of made-up kids costs the
		// issuer nothing).
		ghost := iss.mintWith(issuerKey{kid: "k9", alg: jose.RS256, priv: mustRSA(t)}, resource, nil)
		if status, _, _ := postRPC(t, p.Base+"/mcp", initializeBody, withToken(ghost), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusUnauthorized {
			t.Fatalf("unknown kid: %d", status)
		}
		if got := iss.jwksReads.Load(); got != reads+1 {
			t.Fatalf("an unknown kid right after a reload read the key set again (%d reads)", got-reads)
		}
	})

	t.Run("the token file still admits its holders", func(t *testing.T) {
		cs := p.Connect(e2etest.TokenDairy, "file-agent")
		if env, err := e2etest.CallHTTP(t, cs, "korral_list_authorized_stores", nil); err != nil || env["ok"] != true {
			t.Fatalf("file token beside OAuth: %v %v", env, err)
		}
	})

	if n := len(w.Mock.Server.Orders()); n != ordersBefore+1 {
		t.Fatalf("StoreLink holds %d orders, want %d", n, ordersBefore+1)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d order POSTs reached StoreLink, want the one confirmed with the write scope", n)
	}
}

// isCaller reports whether a recorded caller (the audit trail's client, the
// ledger's requested_by) is caller: exactly, or followed by the client's
// self-declared name (a stateful session knows it) or the session.
func isCaller(recorded, caller string) bool {
	rest, ok := strings.CutPrefix(recorded, caller)
	return ok && (rest == "" || strings.HasPrefix(rest, " (") || strings.HasPrefix(rest, "/"))
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// tamper changes the token's payload (its subject) and keeps the signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	payload = []byte(strings.Replace(string(payload), "jana.novak", "petr.dvora", 1))
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

// Story: an operator misspells the issuer, or points it at something that
// is not the identity provider: the server does not start, and says why.
func TestOAuthRefusesToStartWithoutTheIssuersKeys(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
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

// Story: Jana's agent stages an order under her access token; Jana is also
// an approver. She cannot release her own order; Petr can.
func TestOAuthSubjectCannotApproveItsOwnOrder(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
	const public = "https://mcp.korral.example"
	env := w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	jana := addApprover(t, env, "jana.novak")
	petr := addApprover(t, env, "Petr Dvořák")
	p := e2etest.StartHTTP(t, env)
	cs := p.Connect(iss.mint(public+"/mcp", nil), "oauth-agent")
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

// The issue: one token naming an unknown key, whose key set read hangs at
// the provider, made every valid token wait for that read (9.5 s each), and
// was itself answered 500. Now valid tokens are checked while the read is
// still pending, and the unknown key's request is answered 401 when the read
// ends. No wall time is asserted: the issuer holds the read until the valid
// calls have all been answered, and reports whether the server gave up on it
// meanwhile (only after its own 10 s FetchTimeout, which these few loopback
// calls stay far below).
func TestOAuthValidTokensDoNotWaitForAKeySetRead(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public))
	valid := iss.mint(resource, nil)
	cs := p.Connect(valid, "oauth-agent")
	before := iss.jwksReads.Load()

	entered, release := iss.block()
	type answer struct {
		status          int
		challenge, body string
	}
	unknown := make(chan answer, 1)
	go func() {
		status, challenge, body := postRPC(t, p.Base+"/mcp", toolCallBody, withToken(iss.withKid(resource, "made-up")), withRevision("2025-11-25")).statusChallengeBody()
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
	if n := iss.jwksAbandoned.Load(); n != 0 {
		t.Fatalf("the server gave up %d key set read(s) before the valid calls were answered", n)
	}
	release()
	a := <-unknown
	if a.status != http.StatusUnauthorized || !strings.Contains(a.challenge, `error="invalid_token"`) {
		t.Fatalf("the unknown key after the read: %d %q %s", a.status, a.challenge, a.body)
	}
	if n := iss.jwksReads.Load() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
}

// A key set that cannot be read when a token names an unknown key is the
// provider's outage: 503 with Retry-After (try again), never 500, and
// tokens with a known key go on working.
func TestOAuthProviderDownIsServiceUnavailable(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public))
	iss.jwksDown.Store(true)
	req, err := http.NewRequest(http.MethodPost, p.Base+"/mcp", strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+iss.withKid(resource, "k2"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("unknown key, provider down: %d Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if status, _, body := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.mint(resource, nil)), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusOK {
		t.Fatalf("a known key with the provider down: %d %s", status, body)
	}
}

// Story: Jana buys for Smíchov (47) only. Her access token says so in
// storelink_stores; the deployment's keyring holds 47 and 102. Her agent
// sees 47 alone, and every tool and prompt refuses 102 before StoreLink is
// asked anything about it. A token without the claim sees both, as before.
func TestOAuthStoreClaimLimitsATokenToItsStores(t *testing.T) {
	w := e2etest.NewWorld(t)
	iss := newTestIssuer(t)
	const public = "https://mcp.korral.example"
	resource := public + "/mcp"
	p := e2etest.StartHTTP(t, w.Env("OAUTH_ISSUER="+iss.URL(), "MCP_PUBLIC_URL="+public, "ALLOW_WRITES=true"))
	cs := p.Connect(iss.mint(resource, claims{"storelink_stores": []string{"47"}}), "jana-agent")

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

	// Without the claim: the whole keyring, as before the claim existed.
	all := p.Connect(iss.mint(resource, nil), "buyer-agent")
	listed, err = e2etest.CallHTTP(t, all, "korral_list_authorized_stores", nil)
	if err != nil || listed["data"].(map[string]any)["count_total_available"] != float64(2) {
		t.Fatalf("a token without storelink_stores: %v %v", listed, err)
	}
	// A claim the server cannot read is refused, not read as no limit.
	if status, challenge, _ := postRPC(t, p.Base+"/mcp", initializeBody, withToken(iss.mint(resource, claims{"storelink_stores": "47"})), withRevision("2025-11-25")).statusChallengeBody(); status != http.StatusUnauthorized || !strings.Contains(challenge, "invalid_token") {
		t.Fatalf("storelink_stores as a string: %d %q", status, challenge)
	}
}
