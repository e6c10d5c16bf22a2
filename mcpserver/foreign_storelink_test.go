package mcpserver

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Against a StoreLink whose ids are not ours, the tools must ask rather
// than declare, and say only what they know.

// foreignOrder is an order id of another StoreLink's shape.
const foreignOrder = "rpl_9f7dcc5d27"

func foreignFake() *fakeUpstream {
	f := newFake()
	f.orders[foreignOrder] = domain.Order{ID: foreignOrder, StoreID: "47", SKU: "8847291", QuantityUnits: 12,
		Status: "acknowledged", SubmittedAt: testNow.Add(-3 * time.Hour), ExpectedArrival: testNow.Add(40 * time.Hour)}
	return f
}

// An order id of another shape than our spec's, unknown to the ledger, is
// asked of StoreLink, with or without the write path; StoreLink's 404 is
// said as StoreLink's, and scoping is unchanged.
func TestOrderStatusAsksStoreLinkForAnotherIDShape(t *testing.T) {
	for _, writes := range []bool{false, true} {
		f := foreignFake()
		s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), func(o *Options) {
			if writes {
				o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: sharedLedger(t), UpstreamID: "up-1"}
			}
		})
		env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder, "store_id": "47"})
		data, _ := env["data"].(map[string]any)
		if data["order_id"] != foreignOrder || data["status"] != "acknowledged" || data["quantity_units"] != float64(12) {
			t.Fatalf("writes %v: %v", writes, env)
		}
		for _, id := range []string{"rpl_00000000", "x.y~z-1"} {
			before := f.callsFor("47")
			env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"})
			msg := errText(env)
			if errCode(env) != "NOT_FOUND" || !strings.Contains(msg, `StoreLink has no order "`+id+`" at store 47`) || strings.Contains(msg, "is known") {
				t.Errorf("writes %v, %s: %v", writes, id, env)
			}
			if f.callsFor("47") == before {
				t.Errorf("writes %v, %s: StoreLink was not asked", writes, id)
			}
		}
		// Several stores: store_id is still required, and nothing is sent.
		before := f.callsFor("47") + f.callsFor("102")
		env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder})
		if errCode(env) != "STORE_ID_REQUIRED" || f.callsFor("47")+f.callsFor("102") != before {
			t.Errorf("writes %v, no store_id: %v", writes, env)
		}
		env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder, "store_id": "55"})
		if errCode(env) != "STORE_NOT_AUTHORIZED" || f.callsFor("55") != 0 {
			t.Errorf("writes %v, store 55: %v", writes, env)
		}
	}
}

// An id that cannot be an order id of any StoreLink is refused naming the
// accepted shape, and nothing is sent; the ledger's own ids still work.
func TestOrderStatusRefusesImplausibleIDs(t *testing.T) {
	db := sharedLedger(t)
	key := "agent:2026-11-27:butter-47"
	if _, _, err := db.Reserve(t.Context(), state.Entry{IdempotencyKey: key, StoreID: "47", SKU: "8847291", QuantityUnits: 24,
		Reason: "restock", State: state.StatePendingApproval, ApprovalID: "apr-00c0ffee", ApprovalExpiresAt: testNow.Add(time.Hour),
		CreatedAt: testNow, UpstreamID: "up-1"}); err != nil {
		t.Fatal(err)
	}
	for _, writes := range []bool{false, true} {
		f := foreignFake()
		s := connect(t, f, mustKeyring(t, `{"47":"a"}`), func(o *Options) {
			if writes {
				o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: db, UpstreamID: "up-1"}
			}
		})
		// id -> code: none of them is sent to StoreLink.
		bad := map[string]string{"_rpl": "INVALID_ARGUMENT", "rpl 9f": "INVALID_ARGUMENT", "rpl/9f": "INVALID_ARGUMENT",
			strings.Repeat("a", 65): "INVALID_ARGUMENT", "a:b": "INVALID_ARGUMENT"}
		if writes {
			bad = map[string]string{
				// Within the schema's pattern, yet neither a key nor an order id.
				"a:b": "INVALID_ARGUMENT", "a~b:c": "INVALID_ARGUMENT",
				// Well-formed idempotency keys the ledger does not hold.
				"agent:unknown:key": "NOT_FOUND", strings.Repeat("b", 100): "NOT_FOUND",
			}
		}
		for id, code := range bad {
			env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id})
			if errCode(env) != code {
				t.Errorf("writes %v, %q: %v, want %s", writes, id, env, code)
			}
			if writes && !strings.Contains(errText(env), storeLinkOrderIDShape) {
				t.Errorf("writes %v, %q: the answer does not name a StoreLink order id's shape: %v", writes, id, env)
			}
		}
		if f.callsFor("47") != 0 {
			t.Errorf("writes %v: %d request(s) sent for ids that cannot be orders", writes, f.callsFor("47"))
		}
		if writes {
			// The ledger's own ids: an idempotency key with ':' and an approval id.
			for _, id := range []string{key, "apr-00c0ffee"} {
				env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id})
				data, _ := env["data"].(map[string]any)
				ledger, _ := data["ledger"].(map[string]any)
				if ledger["idempotency_key"] != key || ledger["state"] != string(state.StatePendingApproval) {
					t.Errorf("%s is no longer found: %v", id, env)
				}
			}
			if f.callsFor("47") != 0 {
				t.Errorf("a pending order was asked of StoreLink")
			}
		}
	}
}

// The refusal that the input schema makes names the shape too (read-only:
// the pattern is the plausible order id's own).
func TestOrderIDSchemaRefusalNamesTheShape(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "rpl 9f"})
	if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(errText(env), "order_id") {
		t.Fatalf("got %v", env)
	}
}

// Every id of our spec's shape, every approval id and every idempotency key
// is admitted by the schema; every spec-shaped id is a plausible order id.
func TestOrderIDPatternsNest(t *testing.T) {
	plausible, ref := regexp.MustCompile(storeLinkOrderIDPattern), regexp.MustCompile(orderRefPattern)
	spec, key := regexp.MustCompile(orderIDPattern), regexp.MustCompile(idempotencyKeyPattern)
	for _, id := range []string{"RO-47-000123", "apr-0123456789abcdef", foreignOrder, "a", strings.Repeat("9", 64)} {
		if spec.MatchString(id) && !plausible.MatchString(id) {
			t.Errorf("spec-shaped %q is not plausible", id)
		}
		if plausible.MatchString(id) != ref.MatchString(id) && len(id) <= 64 && !strings.Contains(id, ":") {
			t.Errorf("%q: plausible %v, admitted %v", id, plausible.MatchString(id), ref.MatchString(id))
		}
	}
	for _, k := range []string{"agent:2026-11-27:butter-47", strings.Repeat("k", 128), "apr-0123456789abcdef"} {
		if key.MatchString(k) && !ref.MatchString(k) {
			t.Errorf("idempotency key %q is not admitted", k)
		}
	}
}

// A store whose hours could not be read is not "closed": open_now is left
// out (its error says why), and the answer still fits the output schema.
func TestOpenNowIsUnknownWhenTheStoreCannotBeRead(t *testing.T) {
	f := newFake()
	delete(f.stores, "102") // answered NOT_FOUND by the fake
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	env, res := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	stores := env["data"].(map[string]any)["stores"].([]any)
	byID := map[string]map[string]any{}
	for _, st := range stores {
		m := st.(map[string]any)
		byID[m["store_id"].(string)] = m
	}
	if byID["47"]["open_now"] != true {
		t.Errorf("store 47: %v", byID["47"])
	}
	failed := byID["102"]
	if _, said := failed["open_now"]; said || failed["error"] == nil {
		t.Errorf("store 102 could not be read, yet: %v", failed)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(b), `"open_now":false`) {
		t.Errorf("open_now false for an unread store: %s", b)
	}

	// Every store failing: still no false.
	f.err = apperr.New(apperr.UpstreamContractError, "the store's answer breaks the contract", "")
	env, _ = callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	for _, st := range env["data"].(map[string]any)["stores"].([]any) {
		if _, said := st.(map[string]any)["open_now"]; said {
			t.Errorf("open_now stated for an unread store: %v", st)
		}
	}
}

// A store that is closed, or outside its hours, is open_now false: a known
// false stays in the answer.
func TestOpenNowFalseWhenKnown(t *testing.T) {
	st := pragueStore("47", "Praha Smíchov")
	sunday := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	evening := time.Date(2026, 11, 27, 22, 30, 0, 0, time.UTC)
	for _, now := range []time.Time{sunday, evening} {
		got := describeStore(st, now)
		if got.OpenNow == nil || *got.OpenNow {
			t.Errorf("%s: open_now %v, want false", now, got.OpenNow)
		}
	}
	st.Timezone = "Mars/Olympus"
	if got := describeStore(st, testNow); got.OpenNow != nil {
		t.Errorf("unknown time zone: open_now %v, want it left out", *got.OpenNow)
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
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "audit" {
			continue
		}
		summary, _ = m["summary"].(string)
	}
	if summary == "" {
		t.Fatal("no audit line")
	}
	return summary
}
