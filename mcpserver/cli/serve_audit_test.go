package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds the token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeToolCallsNameTheTokenInTheAuditTrail(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		args := []string{}
		if stateless {
			name, args = "stateless", []string{"--stateless"}
		}
		t.Run(name, func(t *testing.T) {
			up, _ := failingUpstream(t)
			env, stderr := testEnv(t, up.URL, map[string]string{envTokensFile: writeTokens(t, "dairy-agent "+testToken+"\n")})
			r := startServe(t, env, stderr, args...)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "unit-agent", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:   r.base + "/mcp",
				HTTPClient: &http.Client{Transport: bearerTransport{testToken}},
			}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			sort.Strings(names)
			want := "korral_check_stock_risk korral_get_order_status korral_list_authorized_stores korral_list_recent_sales korral_raise_replenishment_order"
			if strings.Join(names, " ") != want {
				t.Fatalf("tools: %v", names)
			}
			// StoreLink is down, so the call fails; the audit line is written
			// either way, and that is what this test is about.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_get_order_status", Arguments: map[string]any{"order_id": "ord-1"}}); err != nil {
				t.Fatal(err)
			}

			var out bytes.Buffer
			auditEnv := env
			auditEnv.Stdout = &out
			if err := Run(ctx, []string{"audit", "--format", "json"}, auditEnv); err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Client string `json:"client"`
				Tool   string `json:"tool"`
			}
			if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &rec); err != nil {
				t.Fatalf("audit: %v: %s", err, out.String())
			}
			const wantWho = "token:dairy-agent (unit-agent)"
			if rec.Tool != "korral_get_order_status" || rec.Client != wantWho {
				t.Fatalf("audit record %+v, want client %q", rec, wantWho)
			}
		})
	}
}

func TestServeHealthAndReadiness(t *testing.T) {
	up, _ := failingUpstream(t)
	env, stderr := testEnv(t, up.URL, nil)
	r := startServe(t, env, stderr)
	get := func(path string) (int, map[string]string) {
		resp, err := http.Get(r.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, m
	}
	if code, m := get("/healthz"); code != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, m)
	}
	code, m := get("/readyz")
	if code != http.StatusOK || m["status"] != "ready" || m["ledger"] != "ok" || m["config"] != "loaded" || m["breaker"] != "closed" {
		t.Fatalf("readyz: %d %v", code, m)
	}
	// Health endpoints answer whatever the Host, so probes by pod IP work.
	req, _ := http.NewRequest(http.MethodGet, r.base+"/healthz", nil)
	req.Host = "10.1.2.3:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz by IP: %d", resp.StatusCode)
	}
}
