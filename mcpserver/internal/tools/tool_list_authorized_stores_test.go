package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// TestListAuthorizedStoresDefinition holds the tool's definition to its snapshot,
// testdata/tools/korral_list_authorized_stores.golden.json.
func TestListAuthorizedStoresDefinition(t *testing.T) {
	checkToolSnap(t, "korral_list_authorized_stores")
}

func TestListAuthorizedStoresIsExactlyTheKeyring(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"102":"k2","47":"k1"}`), nil)
	env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	data := env["data"].(map[string]any)
	stores := data["stores"].([]any)
	if data["count"].(float64) != 2 || len(stores) != 2 {
		t.Fatalf("got %v", data)
	}
	first := stores[0].(map[string]any)
	if first["store_id"] != "47" || plain(first["name"].(string)) != "Praha Smíchov" || first["opening_hours_today"] != "07:00-22:00" ||
		first["open_now"] != true || first["closes_in_minutes"].(float64) != 450 {
		t.Fatalf("store 47: %v", first)
	}
	if f.callsFor("55") != 0 {
		t.Fatal("asked StoreLink about a store outside the keyring")
	}
}

// bigKeyring is a keyring of n stores, 1 to n, each with its own key.
func bigKeyring(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%q", fmt.Sprint(i), fmt.Sprintf("key-%d", i))
	}
	b.WriteString("}")
	return b.String()
}

// TestStoreListIsPaged: one answer lists at most storesPerAnswer stores,
// reading only those; the pages cover the keyring once, in order.
func TestStoreListIsPaged(t *testing.T) {
	const n = 2*storesPerAnswer + 7
	f := newFake()
	s := connect(t, f, mustKeyring(t, bigKeyring(t, n)), nil)
	var seen []string
	after := ""
	for page := 0; ; page++ {
		args := map[string]any{}
		if after != "" {
			args["after_store_id"] = after
		}
		env, _ := callTool(t, s, "korral_list_authorized_stores", args)
		d := env["data"].(map[string]any)
		stores := d["stores"].([]any)
		if len(stores) > storesPerAnswer || d["count"] != float64(len(stores)) || d["count_total_available"] != float64(n) {
			t.Fatalf("page %d: %d stores, count %v, total %v", page, len(stores), d["count"], d["count_total_available"])
		}
		for _, st := range stores {
			seen = append(seen, st.(map[string]any)["store_id"].(string))
		}
		if d["truncated"] != true {
			if _, ok := d["next_after_store_id"]; ok {
				t.Errorf("page %d: the last page names a next page", page)
			}
			break
		}
		after = d["next_after_store_id"].(string)
		if after != seen[len(seen)-1] {
			t.Fatalf("page %d: next_after_store_id %q is not the last store listed (%s)", page, after, seen[len(seen)-1])
		}
	}
	if len(seen) != n {
		t.Fatalf("the pages listed %d stores, want %d", len(seen), n)
	}
	for i, id := range seen {
		if id != fmt.Sprint(i+1) {
			t.Fatalf("store %d of the pages is %s, want %d", i, id, i+1)
		}
		if calls := f.callsFor(id); calls != 1 {
			t.Fatalf("store %s was read %d times, want once", id, calls)
		}
	}
}

// TestStoreListFirstPageAtTheBound: a keyring of exactly storesPerAnswer
// stores is one untruncated page; one more store makes two.
func TestStoreListFirstPageAtTheBound(t *testing.T) {
	for n, truncated := range map[int]bool{storesPerAnswer: false, storesPerAnswer + 1: true} {
		f := newFake()
		s := connect(t, f, mustKeyring(t, bigKeyring(t, n)), nil)
		env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
		d := env["data"].(map[string]any)
		if d["truncated"] != truncated || d["count"] != float64(storesPerAnswer) {
			t.Errorf("%d stores: truncated %v, count %v; want %v, %d", n, d["truncated"], d["count"], truncated, storesPerAnswer)
		}
		if f.callsFor(fmt.Sprint(storesPerAnswer+1)) != 0 {
			t.Errorf("%d stores: the store beyond the page was read", n)
		}
	}
}

// TestStoreListAfterAnUnknownStore: after_store_id need not be in the
// keyring.
func TestStoreListAfterAnUnknownStore(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), nil)
	env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{"after_store_id": "50"})
	stores := env["data"].(map[string]any)["stores"].([]any)
	if len(stores) != 1 || stores[0].(map[string]any)["store_id"] != "102" {
		t.Fatalf("after 50: %v", stores)
	}
	env, _ = callTool(t, s, "korral_list_authorized_stores", map[string]any{"after_store_id": "abc"})
	if env["ok"] != false || env["error"].(map[string]any)["code"] != "INVALID_ARGUMENT" {
		t.Fatalf("after abc: %v", env)
	}
}

// TestOneStoresErrorKeepsItsWholeBody: an error inside the store list keeps
// its retry hint and gets the default remediation.
func TestOneStoresErrorKeepsItsWholeBody(t *testing.T) {
	f := newFake()
	f.err = &apperr.Error{Code: apperr.RateLimited, Message: "StoreLink asks to slow down", RetryAfterSeconds: 7}
	s := connect(t, f, mustKeyring(t, `{"47":"k1"}`), nil)
	env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	stores := env["data"].(map[string]any)["stores"].([]any)
	body := stores[0].(map[string]any)["error"].(map[string]any)
	if body["code"] != "RATE_LIMITED" || body["retry_after_seconds"] != float64(7) || body["remediation"] != apperr.DefaultRemediation(apperr.RateLimited) {
		t.Fatalf("store 47: %v", body)
	}
}

// A store whose hours could not be read has no open_now, and the answer
// still fits the output schema.
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

// A closed store, or one outside its hours, is open_now false.
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
