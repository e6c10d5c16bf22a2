package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

func allRequests(mockstorelink.RequestRecord) bool { return true }

// A complete stateless tools/call, as an attacker without a valid token would send it.
func TestHTTPWithoutAValidTokenNothingRuns(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	for _, mode := range [][]string{nil, {"--stateless"}} {
		p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens), mode...)
		for name, hdr := range map[string]map[string]string{
			"no token":    {},
			"wrong token": {"Authorization": "Bearer " + e2etest.TokenWrong},
			"empty token": {"Authorization": "Bearer "},
			"basic auth":  {"Authorization": "Basic " + e2etest.TokenDairy},
		} {
			if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(hdr)).StatusCode; got != http.StatusUnauthorized {
				t.Errorf("%v %s: status %d, want 401", mode, name, got)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		client := mcp.NewClient(&mcp.Implementation{Name: "intruder", Version: "1"}, nil)
		if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: p.Base + "/mcp", HTTPClient: &http.Client{Transport: e2etest.BearerTransport{Token: e2etest.TokenWrong}},
		}, nil); err == nil {
			_ = cs.Close()
			t.Errorf("%v: an MCP client with a wrong token connected", mode)
		}
		cancel()
		p.Stop()
		// Under --stateless the start line says 2025-11-25 hosts get no views.
		if got := p.Logged("http.stateless"); got != (len(mode) == 1) {
			t.Errorf("%v: http.stateless logged: %v", mode, got)
		}
	}
	if n := w.Requests(allRequests); n != 0 {
		t.Fatalf("%d requests reached StoreLink without a valid token", n)
	}
	if rows := auditRows(t, w); len(rows) != 0 {
		t.Fatalf("refused requests reached the audit trail: %v", rows)
	}
}

// auditRows reads the audit trail through the CLI, as a buyer would.
func auditRows(t *testing.T, w *e2etest.World) []map[string]any {
	t.Helper()
	return auditRowsIn(t, w.Env())
}

// auditRowsIn reads the audit trail that the environment env points at.
func auditRowsIn(t *testing.T, env []string) []map[string]any {
	t.Helper()
	out, stderr, exit := e2etest.RunCLI(t, env, "audit", "--format", "json")
	if exit != 0 {
		t.Fatalf("audit: exit %d: %s", exit, stderr)
	}
	var rows []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, m)
	}
	return rows
}

func TestHTTPForeignHostOrOriginIsRefused(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	auth := "Bearer " + e2etest.TokenDairy
	for name, tc := range map[string]struct {
		hdr  map[string]string
		want int
	}{
		"foreign host":          {map[string]string{"Authorization": auth, "Host": "attacker.example:80"}, http.StatusMisdirectedRequest},
		"rebinding host+origin": {map[string]string{"Authorization": auth, "Host": "attacker.example", "Origin": "http://attacker.example"}, http.StatusMisdirectedRequest},
		"foreign origin":        {map[string]string{"Authorization": auth, "Origin": "https://attacker.example"}, http.StatusForbidden},
		"lookalike origin":      {map[string]string{"Authorization": auth, "Origin": "http://localhost.attacker.example"}, http.StatusForbidden},
	} {
		if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(tc.hdr)).StatusCode; got != tc.want {
			t.Errorf("%s: status %d, want %d", name, got, tc.want)
		}
	}
	if n := w.Requests(allRequests); n != 0 {
		t.Fatalf("%d requests reached StoreLink", n)
	}
	if !p.Logged("http.host_refused") || !p.Logged("http.origin_refused") {
		t.Fatal("refusals were not logged")
	}
	// The same request from a loopback page is served.
	cs := p.Connect(e2etest.TokenDairy, "e2e-agent")
	if env, err := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}); err != nil || env["ok"] != true {
		t.Fatalf("a legitimate call: %v %v", env, err)
	}
}

// TestHTTPSIGTERMLetsAnInFlightCallFinish: on SIGTERM during a held read, the
// client still gets its answer and the process exits cleanly.
func TestHTTPSIGTERMLetsAnInFlightCallFinish(t *testing.T) {
	for _, mode := range [][]string{nil, {"--stateless"}} {
		t.Run(fmt.Sprint("flags", mode), func(t *testing.T) {
			w := e2etest.NewWorld(t)
			p := e2etest.StartHTTP(t, w.Env("UPSTREAM_TIMEOUT=20s"), mode...)
			cs := p.Connect("", "e2e-agent")
			w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpGetInventory, Delay: 1500 * time.Millisecond})
			isInventory := func(r mockstorelink.RequestRecord) bool { return r.OperationID == mockstorelink.OpGetInventory }

			type answer struct {
				env map[string]any
				err error
			}
			got := make(chan answer, 1)
			go func() {
				env, err := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
				got <- answer{env, err}
			}()
			deadline := time.Now().Add(15 * time.Second)
			for w.Requests(isInventory) == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if w.Requests(isInventory) == 0 {
				t.Fatal("the call never reached StoreLink")
			}
			if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			a := <-got
			if a.err != nil || a.env["ok"] != true {
				t.Fatalf("in-flight call after SIGTERM: %v %v\n%s", a.env, a.err, p.Stderr.String())
			}
			select {
			case <-p.Done:
			case <-time.After(30 * time.Second):
				t.Fatal("the server did not exit after SIGTERM")
			}
			if p.Exit != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", p.Exit, p.Stderr.String())
			}
			if !p.Logged("http.shutdown") || !p.Logged("server.stop") || p.Logged("http.shutdown_forced") {
				t.Fatalf("shutdown not clean:\n%s", p.Stderr.String())
			}
		})
	}
}

// TestHTTPTwoReplicasShareOneLedgerWithoutDuplicateOrders: the same order
// confirmed at two replicas at once gives exactly one order.
func TestHTTPTwoReplicasShareOneLedgerWithoutDuplicateOrders(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	env := w.Env("ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens)
	replicas := []*e2etest.HTTPProc{e2etest.StartHTTP(t, env, "--stateless"), e2etest.StartHTTP(t, env, "--stateless")}
	const key = "replica-race-key-0001"
	sameKeyRace(t, w, replicas, key, 4)
	if rows := ledgerRows(t, w.StatePath); len(rows) != 1 || rows[key] != "raised" {
		t.Fatalf("ledger: %v", rows)
	}
	// Both replicas did take calls, and the audit names the token.
	for i, r := range replicas {
		if !r.Logged("tool.ok") && !r.Logged("tool.err") {
			t.Errorf("replica %d served no call", i)
		}
	}
	for _, row := range auditRows(t, w) {
		if !strings.HasPrefix(fmt.Sprint(row["client"]), "token:dairy-agent") {
			t.Fatalf("audit row without the token label: %v", row)
		}
	}
}

// sameKeyRace confirms one order under key perReplica times at each replica
// at once, with a slow first POST: StoreLink sees one POST, and every other
// call is a replay or an unknown outcome. Client i at replica r is
// replica-r-agent-i.
func sameKeyRace(t *testing.T, w *e2etest.World, replicas []*e2etest.HTTPProc, key string, perReplica int) {
	t.Helper()
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 300 * time.Millisecond})
	type result struct {
		env map[string]any
		err error
	}
	results := make(chan result, len(replicas)*perReplica)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for r, p := range replicas {
		for i := range perReplica {
			cs := p.Connect(e2etest.TokenDairy, fmt.Sprintf("replica-%d-agent-%d", r, i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				env, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
				results <- result{env, err}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(results)

	raised, replayed, unknown, orderIDs := 0, 0, 0, map[string]bool{}
	for r := range results {
		if r.err != nil {
			t.Fatalf("call: %v", r.err)
		}
		if r.env["ok"] != true {
			if c := e2etest.Code(r.env); c != "WRITE_OUTCOME_UNKNOWN" {
				t.Fatalf("unexpected failure: %v", r.env)
			}
			unknown++
			continue
		}
		d := data(t, r.env)
		switch d["mode"] {
		case "raised":
			raised++
		case "replay":
			replayed++
		default:
			t.Fatalf("unexpected mode: %v", d)
		}
		orderIDs[d["order_id"].(string)] = true
	}
	t.Logf("%d raised, %d replayed, %d told the outcome is still unknown", raised, replayed, unknown)
	if raised != 1 || len(orderIDs) != 1 {
		t.Fatalf("%d raised, order ids %v; want one order", raised, orderIDs)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("StoreLink saw %d createReplenishmentOrder requests, want exactly 1", n)
	}
}

func TestHTTPHealthAndReadiness(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartHTTP(t, w.Env("BREAKER_FAILURES=1", "BREAKER_COOLDOWN=10m"))
	get := func(path string) (int, map[string]any) {
		resp, err := http.Get(p.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, m
	}
	if c, m := get("/healthz"); c != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz: %d %v", c, m)
	}
	if c, m := get("/readyz"); c != http.StatusOK || m["status"] != "ready" || m["ledger"] != "ok" || m["breaker"] != "closed" {
		t.Fatalf("readyz: %d %v", c, m)
	}
	// StoreLink failing opens the breaker; the replica stays ready and says so.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503})
	cs := p.Connect("", "e2e-agent")
	if env, err := e2etest.CallHTTP(t, cs, "korral_list_recent_sales", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}); err != nil || e2etest.Code(env) != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("call against a failing StoreLink: %v %v", env, err)
	}
	if c, m := get("/readyz"); c != http.StatusOK || m["breaker"] != "open" {
		t.Fatalf("readyz with the breaker open: %d %v", c, m)
	}
}

func TestHTTPTokenFileIsReloadedWhenItChanges(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	base := time.Now().Add(-time.Hour)
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", base)
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens), "--stateless")
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	if env, err := e2etest.CallHTTP(t, p.Connect(e2etest.TokenDairy, "agent"), "korral_list_recent_sales", args); err != nil || env["ok"] != true {
		t.Fatalf("first token: %v %v", env, err)
	}

	// Rotate: the dairy token is revoked, a new holder is added.
	e2etest.WriteTokenFile(t, tokens, "# rotated\nbrno-agent "+e2etest.TokenBrno+"\n", base.Add(time.Minute))
	if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(map[string]string{"Authorization": "Bearer " + e2etest.TokenDairy})).StatusCode; got != http.StatusUnauthorized {
		t.Fatalf("revoked token: status %d", got)
	}
	if env, err := e2etest.CallHTTP(t, p.Connect(e2etest.TokenBrno, "agent"), "korral_list_recent_sales", args); err != nil || env["ok"] != true {
		t.Fatalf("new token: %v %v", env, err)
	}
	if !p.Logged("auth.tokens_reloaded") {
		t.Fatal("the reload was not logged")
	}
	var who []string
	for _, row := range auditRows(t, w) {
		who = append(who, fmt.Sprint(row["client"]))
	}
	if strings.Join(who, ",") != "token:brno-agent (agent),token:dairy-agent (agent)" &&
		strings.Join(who, ",") != "token:dairy-agent (agent),token:brno-agent (agent)" {
		t.Fatalf("audit callers: %v", who)
	}
}

func TestHTTPRefusesToStartOpenWithoutTokens(t *testing.T) {
	w := e2etest.NewWorld(t)
	// Refused before anything listens, so no test binds beyond loopback.
	_, stderr, exit := e2etest.RunCLI(t, w.Env(), "serve", "--http", "0.0.0.0:0", "--allowed-host", "mcp.korral.example")
	if exit != 2 || !strings.Contains(stderr, "MCP_AUTH_TOKENS_FILE is not set") || strings.Contains(stderr, "http.listening") {
		t.Fatalf("exit %d:\n%s", exit, stderr)
	}
	_, stderr, exit = e2etest.RunCLI(t, w.Env(), "serve", "--http", "192.0.2.10:0")
	if exit != 2 || !strings.Contains(stderr, "--insecure-no-auth") {
		t.Fatalf("exit %d:\n%s", exit, stderr)
	}
	if n := w.Requests(allRequests); n != 0 {
		t.Fatalf("%d requests reached StoreLink", n)
	}
}
