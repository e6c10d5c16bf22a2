package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mockstorelink"
)

func TestStdioServesExactToolsAndOnlyProtocolOnStdout(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	res, err := p.CS.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: implicit annotations", tool.Name)
		}
	}
	want := "korral_check_stock_risk korral_get_order_status korral_list_authorized_stores korral_list_recent_sales korral_raise_replenishment_order"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tools: %s", got)
	}
	p.Call("korral_list_authorized_stores", map[string]any{})
	p.Stop()
	for _, line := range strings.Split(strings.TrimSpace(p.Stdout.String()), "\n") {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", line)
		}
	}
	p.LogLines() // every stderr line is JSON
}

func TestReadOnlyHidesTheWriteTool(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("READ_ONLY=true"))
	res, err := p.CS.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if !tool.Annotations.ReadOnlyHint {
			t.Fatalf("read-only deployment lists %s", tool.Name)
		}
	}
	if len(res.Tools) != 4 {
		t.Fatalf("%d tools, want the 4 read tools", len(res.Tools))
	}
}

// TestButterScenarioNumbers: the butter gap (sold in 24 h minus on hand) is
// 17 at store 47 and 6 at store 102.
func TestButterScenarioNumbers(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	for store, wantGap := range map[string]float64{"47": 17, "102": 6} {
		risk := data(t, p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": store}))
		sales := data(t, p.Call("korral_list_recent_sales", map[string]any{"sku": mockstorelink.SKUButter, "store_id": store}))
		id := risk["product"].(map[string]any)
		if plainText(id["name"]) != "Madeta butter 250g" || plainText(id["supplier"]) != "Madeta a.s." {
			t.Fatalf("identity %v", id)
		}
		r := risk["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
		onHand := num(r["on_hand_units"])
		if sold := num(r["units_sold_last_24h"]); sold-onHand != wantGap {
			t.Errorf("store %s: the risk check's own 24 h figure %v minus on hand %v is not the gap %v", store, sold, onHand, wantGap)
		}
		gap := num(sales["units_sold_in_window"]) - onHand
		if gap != wantGap || sales["units_total_complete"] != true {
			t.Errorf("store %s: sold %v, on hand %v, gap %v, want %v", store, sales["units_sold_in_window"], onHand, gap, wantGap)
		}
	}
}

func TestUnauthorizedStoreNeverLeavesTheProcess(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	before := w.Requests(func(mockstorelink.RequestRecord) bool { return true })
	for _, tool := range []string{"korral_check_stock_risk", "korral_list_recent_sales", "korral_raise_replenishment_order"} {
		args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": mockstorelink.StoreOstrava}
		if strings.Contains(tool, "raise") {
			args["quantity_units"], args["reason"] = 12, "test"
		}
		if c := e2etest.Code(p.Call(tool, args)); c != "STORE_NOT_AUTHORIZED" {
			t.Fatalf("%s: %s", tool, c)
		}
	}
	if c := e2etest.Code(p.Call("korral_get_order_status", map[string]any{"order_id": "RO-55-000001", "store_id": "55"})); c != "STORE_NOT_AUTHORIZED" {
		t.Fatalf("order status: %s", c)
	}
	if c := e2etest.Code(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter})); c != "STORE_ID_REQUIRED" {
		t.Fatalf("missing store id with two stores: %s", c)
	}
	if n := w.Requests(func(mockstorelink.RequestRecord) bool { return true }) - before; n != 0 {
		t.Fatalf("%d requests reached StoreLink", n)
	}
}

func TestBadArgumentsOverStdio(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	for _, args := range []map[string]any{
		{"sku": mockstorelink.SKUButter, "store_id": "47", "lookback_days": 99},
		{"sku": mockstorelink.SKUButter, "store_id": "47", "extra": "smuggled"},
		{"sku": 8847291, "store_id": "47"},
	} {
		env := p.Call("korral_check_stock_risk", args)
		if e2etest.Code(env) != "INVALID_ARGUMENT" || env["error"].(map[string]any)["remediation"] == "" {
			t.Fatalf("%v: %v", args, env)
		}
	}
	if n := w.Requests(func(mockstorelink.RequestRecord) bool { return true }); n != 0 {
		t.Fatalf("%d requests for invalid calls", n)
	}
}

func TestLogsShareCallIDAndNeverHoldKeys(t *testing.T) {
	w := e2etest.NewWorld(t)
	// The world's servers log at debug: every line a call causes (ADR 0046).
	p := e2etest.StartServer(t, w.Env())
	p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUUnknown, "store_id": "47"})
	p.Call("korral_list_authorized_stores", map[string]any{})
	// stderr is copied asynchronously: wait (bounded) for the three end lines.
	waitForLines(p, 3, "tool.ok", "tool.err")
	oks := p.LinesWhere("tool.ok", "tool", "korral_check_stock_risk")
	if len(oks) != 1 {
		t.Fatalf("%d tool.ok lines for the risk check", len(oks))
	}
	id := oks[0]["call_id"].(string)
	ups := p.LinesWhere("upstream.request", "call_id", id)
	routes := map[string]bool{}
	for _, l := range ups {
		routes[l["route"].(string)] = true
		for _, k := range []string{"method", "status", "duration_ms", "attempt", "breaker"} {
			if _, ok := l[k]; !ok {
				t.Errorf("upstream.request without %s: %v", k, l)
			}
		}
	}
	if len(routes) != 5 {
		t.Fatalf("risk check fan-out under call_id %s reached %d routes: %v", id, len(routes), routes)
	}
	// The end line counts the requests the debug lines show.
	if n, _ := oks[0]["upstream_requests"].(float64); int(n) != len(ups) || oks[0]["upstream_slowest_ms"].(float64) <= 0 {
		t.Fatalf("tool.ok counts %v requests (slowest %v ms); %d upstream.request lines", oks[0]["upstream_requests"], oks[0]["upstream_slowest_ms"], len(ups))
	}
	if len(p.LinesWhere("tool.start", "call_id", id)) != 1 {
		t.Fatalf("no tool.start line at debug for call %s", id)
	}
	errs := p.LinesWhere("tool.err", "error_code", "NOT_FOUND")
	if len(errs) != 1 || errs[0]["error_message"] == "" {
		t.Fatalf("tool.err lines: %v", errs)
	}
	// Each call ends with one line holding the audit row's fields.
	ends := append(p.LinesWhere("tool.ok"), p.LinesWhere("tool.err")...)
	if len(ends) != 3 || len(p.LinesWhere("audit")) != 0 {
		t.Fatalf("%d lines end 3 calls, %d audit lines beside them", len(ends), len(p.LinesWhere("audit")))
	}
	for _, l := range ends {
		for _, k := range []string{"client", "session", "summary"} {
			if v, _ := l[k].(string); v == "" {
				t.Errorf("%s without %s: %v", l["msg"], k, l)
			}
		}
	}
	// At the default level (info), a call that goes well writes one line.
	q := e2etest.StartServer(t, w.Env("LOG_LEVEL=info"))
	q.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	waitForLines(q, 1, "tool.ok")
	if lines := q.LogLines(); len(q.LinesWhere("tool.ok")) != 1 {
		t.Fatalf("no tool.ok line at info: %v", lines)
	} else {
		id := q.LinesWhere("tool.ok")[0]["call_id"]
		var msgs []any
		for _, l := range lines {
			if l["call_id"] == id {
				msgs = append(msgs, l["msg"])
			}
		}
		if len(msgs) != 1 {
			t.Fatalf("a call that went well wrote %v at info; want tool.ok alone", msgs)
		}
	}
	logs := p.Stderr.String() + q.Stderr.String()
	for store, key := range w.Mock.Server.Keys() {
		if strings.Contains(logs, key) {
			t.Fatalf("the key of store %s appears in the logs", store)
		}
	}
}

func TestAuditTrailSurvivesRestart(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	p.Call("korral_list_authorized_stores", map[string]any{})
	p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "55"})
	p.Stop()
	out, stderr, exit := e2etest.RunCLI(t, w.Env(), "audit", "--format", "json")
	if exit != 0 {
		t.Fatalf("audit exit %d: %s", exit, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit trail after restart: %q", out)
	}
	var second map[string]any
	_ = json.Unmarshal([]byte(lines[1]), &second)
	if second["client"] != "e2e-agent" || second["error_code"] != "STORE_NOT_AUTHORIZED" || second["summary"] == "" {
		t.Fatalf("audit event: %v", second)
	}
	report, _, exit := e2etest.RunCLI(t, w.Env(), "audit", "report")
	if exit != 0 || !strings.Contains(report, "korral_check_stock_risk") || !strings.Contains(report, "STORE_NOT_AUTHORIZED=1") {
		t.Fatalf("report (exit %d):\n%s", exit, report)
	}
}

func TestKeyRotatedMidSession(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	if env := p.Call("korral_check_stock_risk", args); env["ok"] != true {
		t.Fatalf("before rotation: %v", env)
	}
	newKey := w.Mock.Server.RotateKey("47")
	w.Mock.Server.ResetRequests()
	if c := e2etest.Code(p.Call("korral_list_recent_sales", args)); c != "AUTH_KEY_INVALID" {
		t.Fatalf("after rotation: %s", c)
	}
	// One request, no retry: the keyring file still holds the old key.
	if n := w.Requests(func(r mockstorelink.RequestRecord) bool { return r.StoreID == "47" }); n != 1 {
		t.Fatalf("%d requests after rotation, want 1", n)
	}
	kr := w.Mock.Server.DefaultKeyring()
	kr["47"] = newKey
	w.WriteKeyring(t, kr)
	w.Mock.Server.ResetRequests()
	if env := p.Call("korral_list_recent_sales", args); env["ok"] != true {
		t.Fatalf("after the keyring file was updated: %v", env)
	}
	// The stale key once, then the new one: exactly one guarded retry.
	if n := w.Requests(func(r mockstorelink.RequestRecord) bool { return r.StoreID == "47" }); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if strings.Contains(p.Stderr.String(), newKey) {
		t.Fatal("the new key appears in the logs")
	}
}

func TestBreakerOpensFailsFastAndRecovers(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("BREAKER_FAILURES=3", "BREAKER_COOLDOWN=1s"))
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503})
	for i := 0; i < 3; i++ {
		if c := e2etest.Code(p.Call("korral_list_recent_sales", args)); c != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("call %d: %s", i, c)
		}
	}
	before := w.Requests(func(mockstorelink.RequestRecord) bool { return true })
	env := p.Call("korral_list_recent_sales", args)
	if e2etest.Code(env) != "UPSTREAM_UNAVAILABLE" || num(env["error"].(map[string]any)["retry_after_seconds"]) < 1 {
		t.Fatalf("open breaker: %v", env)
	}
	if n := w.Requests(func(mockstorelink.RequestRecord) bool { return true }) - before; n != 0 {
		t.Fatalf("%d requests reached StoreLink while the breaker was open", n)
	}
	if len(p.LinesWhere("breaker.state", "to", "open")) == 0 {
		t.Fatal("breaker opening not logged")
	}
	w.Mock.Server.ClearFaults()
	time.Sleep(1100 * time.Millisecond) // the configured cool-down
	if env := p.Call("korral_list_recent_sales", args); env["ok"] != true {
		t.Fatalf("after cool-down: %v", env)
	}
}

func TestHangingReadTimesOut(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("UPSTREAM_TIMEOUT=300ms"))
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpGetInventory, Delay: 10 * time.Second})
	if c := e2etest.Code(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})); c != "UPSTREAM_TIMEOUT" {
		t.Fatalf("got %s", c)
	}
}

func TestBrokenUpstreamBodiesAreClearErrors(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	for _, kind := range []mockstorelink.FaultKind{mockstorelink.FaultMalformedJSON, mockstorelink.FaultOversized, mockstorelink.FaultErrorIn200} {
		w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: kind, OperationID: mockstorelink.OpListPOSTransactions})
		env := p.Call("korral_list_recent_sales", args)
		if e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" {
			t.Errorf("%s: %v", kind, env)
		}
	}
	// A wrong-typed total_count only qualifies the answer (ADR 0030): sales
	// are answered, the total is unknown.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongType, OperationID: mockstorelink.OpListPOSTransactions})
	if env := p.Call("korral_list_recent_sales", args); env["ok"] != true || !strings.Contains(fmt.Sprint(env["data"]), "pos.total_count: ") {
		t.Errorf("%s: %v", mockstorelink.FaultDriftWrongType, env)
	}
	// On a stock count it is the on-hand figure, which decides.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongType, OperationID: mockstorelink.OpGetInventory})
	if env := p.Call("korral_check_stock_risk", args); e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(errMessage(env), "inventory.on_hand_units") {
		t.Errorf("%s on the count: %v", mockstorelink.FaultDriftWrongType, env)
	}
	w.Mock.Server.ClearFaults()
	// The quirk SKU answers 200 with an error body on every call.
	if c := e2etest.Code(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUQuirk, "store_id": "47"})); c != "UPSTREAM_CONTRACT_ERROR" {
		t.Errorf("quirk SKU: %s", c)
	}
	if env := p.Call("korral_list_recent_sales", args); env["ok"] != true {
		t.Fatalf("server did not survive: %v", env)
	}
}

func TestMalformedConfigurationStopsStartup(t *testing.T) {
	w := e2etest.NewWorld(t)
	for _, bad := range []string{"DEFAULT_LOOKBACK_DAYS=40", "STORELINK_KEYRING={not json", "ALLOW_WRITES=maybe", "UPSTREAM_TIMEOUT=fast"} {
		_, stderr, exit := e2etest.RunCLI(t, w.Env(bad), "stdio")
		name := strings.SplitN(bad, "=", 2)[0]
		if exit != 2 || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, stderr %q", bad, exit, stderr)
		}
	}
}

func TestUpstreamTextReachesTheModelAsMarkedData(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	risk := data(t, p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUInjection, "store_id": "47"}))
	name := risk["product"].(map[string]any)["name"].(string)
	inner, ok := mcpserver.UntrustedText(name)
	if !ok || !strings.Contains(inner, "IGNORE PREVIOUS INSTRUCTIONS") {
		t.Fatalf("product name not marked as untrusted data: %q", name)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d orders after reading an injected name", n)
	}
}

// waitForLines waits, at most 10 s, until p has logged n lines with one of
// msgs; the caller checks what arrived.
func waitForLines(p *e2etest.Proc, n int, msgs ...string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got := 0
		for _, m := range msgs {
			got += len(p.LinesWhere(m))
		}
		if got >= n {
			return
		}
	}
}
