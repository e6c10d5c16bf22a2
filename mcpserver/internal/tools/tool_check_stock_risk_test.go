package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/storelinkclient"
)

// TestLookbackCapIsStoreLinksHistory: lookback_days is capped at
// storelinkclient.HistoryDays, and the projection accepts exactly that.
func TestLookbackCapIsStoreLinksHistory(t *testing.T) {
	if projection.MaxLookbackDays != storelinkclient.HistoryDays {
		t.Errorf("projection.MaxLookbackDays is %d, StoreLink's history storelinkclient.HistoryDays is %d: they must be equal",
			projection.MaxLookbackDays, storelinkclient.HistoryDays)
	}
}

// TestCheckStockRiskDefinition holds the tool's definition to its snapshot,
// testdata/tools/korral_check_stock_risk.golden.json.
func TestCheckStockRiskDefinition(t *testing.T) {
	checkToolSnap(t, "korral_check_stock_risk")
}

func TestCheckStockRiskAnswersWithEvidence(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	if env["ok"] != true {
		t.Fatalf("got %v", env)
	}
	data := env["data"].(map[string]any)
	id := data["product"].(map[string]any)
	store := data["stores"].([]any)[0].(map[string]any)
	risk := store["risk"].(map[string]any)
	if plain(id["name"].(string)) != "Madeta butter 250g" || plain(id["supplier"].(string)) != "Madeta a.s." || store["store_id"] != "47" ||
		len(data["stores"].([]any)) != 1 {
		t.Fatalf("identity %v", data)
	}
	// 5 on hand counted at 12:30, nothing sold since in the fake, two units an
	// hour: it runs out this afternoon, well before 22:00.
	if risk["will_stockout_before_close_today"] != "true" {
		t.Fatalf("risk %v", risk)
	}
	// The headline is built from the same projection (headline_test.go).
	if h, _ := risk["headline"].(string); !strings.HasPrefix(h, "Runs out ") || !strings.Contains(h, "before the 22:00 close") {
		t.Errorf("headline %q", risk["headline"])
	}
	if notes, _ := risk["data_quality_notes"].([]any); len(notes) != len(risk["data_quality_flags"].([]any)) {
		t.Errorf("data_quality_notes %v for flags %v", risk["data_quality_notes"], risk["data_quality_flags"])
	}
	// Since Thursday 14:30: the sales at 15:15 .. 21:15, 7 of 2 units (the
	// same window korral_list_recent_sales totals by default).
	if risk["units_sold_last_24h"] != 14.0 {
		t.Fatalf("units_sold_last_24h %v, want 14", risk["units_sold_last_24h"])
	}
	if ev := risk["evidence"].(map[string]any)["rows"].([]any); len(ev) != 14 {
		t.Fatalf("evidence rows %d, want 14 (default lookback)", len(ev))
	}
	// One line at info ends the call, with the audit row's fields; no
	// separate audit line (ADR 0046).
	var ends []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.logText()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == "audit" || m["msg"] == "tool.start" || m["msg"] == "upstream.request" {
			t.Errorf("a %s line at info: %v", m["msg"], m)
		}
		if m["msg"] == "tool.ok" {
			ends = append(ends, m)
		}
	}
	if len(ends) != 1 {
		t.Fatalf("%d tool.ok lines, want 1", len(ends))
	}
	for _, k := range []string{"call_id", "tool", "client", "store_id", "sku", "summary"} {
		if v, ok := ends[0][k]; !ok || v == "" {
			t.Errorf("tool.ok without %s: %v", k, ends[0])
		}
	}
	// This session has no id and the StoreLink here is in process; the e2e
	// test TestLogsShareCallIDAndNeverHoldKeys checks their values.
	for _, k := range []string{"session", "duration_ms", "upstream_requests", "upstream_slowest_ms"} {
		if _, ok := ends[0][k]; !ok {
			t.Errorf("tool.ok without %s: %v", k, ends[0])
		}
	}
}

func TestRiskCheckRefusesAPartialHistory(t *testing.T) {
	f := newFake()
	f.truncate = true
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(env["error"].(map[string]any)["remediation"].(string), "lookback_days") {
		t.Fatalf("got %v", env)
	}
}

func TestCheckStockRiskSeveralStoresAnswersPerStore(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"102", "55", "47"}})
	if env["ok"] != true {
		t.Fatalf("got %v", env)
	}
	data := env["data"].(map[string]any)
	stores := data["stores"].([]any)
	if len(stores) != 3 {
		t.Fatalf("want one entry per store asked for: %v", stores)
	}
	for i, want := range []string{"102", "55", "47"} {
		st := stores[i].(map[string]any)
		if st["store_id"] != want {
			t.Fatalf("entry %d is store %v, want %s (the order asked)", i, st["store_id"], want)
		}
		_, hasRisk := st["risk"]
		if want == "55" {
			if hasRisk || errCode(st) != "STORE_NOT_AUTHORIZED" {
				t.Fatalf("store 55: %v", st)
			}
			continue
		}
		if !hasRisk || st["error"] != nil || plain(st["store_name"].(string)) == "" {
			t.Fatalf("store %s: %v", want, st)
		}
	}
	if f.callsFor("55") != 0 {
		t.Fatalf("%d upstream calls for store 55, which holds no key", f.callsFor("55"))
	}
	if plain(data["product"].(map[string]any)["name"].(string)) != "Madeta butter 250g" {
		t.Fatalf("product %v", data["product"])
	}
	// One tag for the whole answer: every marked text closes with it.
	tag := regexp.MustCompile(`⟦untrusted:([0-9a-f]+)⟧`).FindAllStringSubmatch(fmt.Sprint(env), -1)
	if len(tag) != 4 {
		t.Fatalf("want 4 marked texts (2 of the product, 2 store names), got %d", len(tag))
	}
	for _, m := range tag {
		if m[1] != tag[0][1] {
			t.Fatalf("answer uses several tags: %v", tag)
		}
	}
}

func TestCheckStockRiskStoreIDsBoundsAndConflicts(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	many := make([]string, maxRiskStores+1)
	for i := range many {
		many[i] = fmt.Sprint(i + 1)
	}
	for name, args := range map[string]map[string]any{
		"too many":  {"sku": "8847291", "store_ids": many},
		"duplicate": {"sku": "8847291", "store_ids": []string{"47", "47"}},
		"empty":     {"sku": "8847291", "store_ids": []string{}},
		"bad id":    {"sku": "8847291", "store_ids": []string{"47", "x1"}},
		"both":      {"sku": "8847291", "store_id": "47", "store_ids": []string{"102"}},
	} {
		env, _ := callTool(t, s, "korral_check_stock_risk", args)
		if errCode(env) != "INVALID_ARGUMENT" {
			t.Errorf("%s: %v", name, env)
		}
	}
	if f.callsFor("47")+f.callsFor("102") != 0 {
		t.Fatal("a refused call reached StoreLink")
	}
}

// A refused projection has no band and no window: its answer still matches
// the output schema, where those are the only nullable fields.
func TestRiskRefusalMatchesItsSchema(t *testing.T) {
	f := newFake()
	f.sales = nil
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	risk := env["data"].(map[string]any)["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	if risk["units_per_trading_hour"] != nil || risk["confidence"] != "none" {
		t.Fatalf("want a refusal: %v", risk)
	}
}

// The audit summary never has an empty placeholder: when no store could be
// checked it names the SKU and each store's error code.
func TestRiskSummarySaysWhatIsKnown(t *testing.T) {
	f := newFake()
	f.err = apperr.New(apperr.UpstreamContractError, "the answer breaks the contract", "")
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"47", "102"}})
	summary := lastAuditSummary(t, s)
	want := "Checked stock risk of SKU 8847291 at 2 store(s): store 47: UPSTREAM_CONTRACT_ERROR; store 102: UPSTREAM_CONTRACT_ERROR. 2 store(s) could not be checked."
	if summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}

	// One store checked, one refused locally: the name, the verdict and the code.
	f.err = nil
	callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"55", "47"}})
	summary = lastAuditSummary(t, s)
	if !strings.HasPrefix(summary, "Checked stock risk of Madeta butter 250g (SKU 8847291) at 2 store(s): store 55: STORE_NOT_AUTHORIZED; store 47: on hand 5,") ||
		!strings.HasSuffix(summary, " 1 store(s) could not be checked.") {
		t.Errorf("summary %q", summary)
	}
	for _, blank := range []string{"of  (", ": ;", ": ."} {
		if strings.Contains(summary, blank) {
			t.Errorf("summary has an empty placeholder %q: %q", blank, summary)
		}
	}
}

func lastAuditSummary(t *testing.T, s session) string {
	t.Helper()
	summary := ""
	for _, line := range strings.Split(s.logText(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "tool.ok" && m["msg"] != "tool.err" {
			continue
		}
		summary, _ = m["summary"].(string)
	}
	if summary == "" {
		t.Fatal("no line ends a call with its summary")
	}
	return summary
}
