package mockstorelink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/storelinkclient"
)

const inventoryPath = "/v1/stores/47/inventory?sku=" + mockstorelink.SKUButter

// decodeObject decodes a JSON object body, keeping numbers exact.
func decodeObject(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %.200s", err, body)
	}
	return m
}

func TestFaultsShortCircuit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fault  mockstorelink.Fault
		status int
		code   string
		header map[string]string
	}{
		{"5xx default", mockstorelink.Fault{Kind: mockstorelink.FaultStatus}, 503, "unavailable", nil},
		{"5xx chosen", mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 500}, 500, "internal", nil},
		{"rate limit", mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, RetryAfter: 7}, 429, "rate_limited", map[string]string{"Retry-After": "7"}},
		{"rate limit default", mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit}, 429, "rate_limited", map[string]string{"Retry-After": "1"}},
		{"error in 200", mockstorelink.Fault{Kind: mockstorelink.FaultErrorIn200}, 200, "internal", nil},
		{"hang released by its bound", mockstorelink.Fault{Kind: mockstorelink.FaultHang, Delay: time.Millisecond}, 503, "unavailable", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := start(t, mockstorelink.Options{})
			m.Server.SetFaults(tc.fault)
			status, hdr, body := rawGet(t, m.URL+inventoryPath, m.Server.Keys()["47"])
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if got := errorCode(t, body); got != tc.code {
				t.Errorf("code %q, want %q", got, tc.code)
			}
			for k, v := range tc.header {
				if hdr.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, hdr.Get(k), v)
				}
			}
		})
	}
}

func TestFaultCountScopeAndClear(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	keys := m.Server.Keys()
	k47, k102 := keys["47"], keys["102"]
	get := func(path, k string) int {
		status, _, _ := rawGet(t, m.URL+path, k)
		return status
	}

	// A burst of exactly two 503s on one route, then recovery.
	m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, OperationID: mockstorelink.OpGetInventory, Count: 2})
	if s := get("/v1/stores/47", k47); s != 200 {
		t.Errorf("another operation: %d", s)
	}
	got := []int{get(inventoryPath, k47), get(inventoryPath, k47), get(inventoryPath, k47)}
	if diff := cmp.Diff([]int{503, 503, 200}, got); diff != "" {
		t.Errorf("burst (-want +got):\n%s", diff)
	}
	if len(m.Server.Faults()) != 0 {
		t.Errorf("a spent fault is still listed: %+v", m.Server.Faults())
	}

	// Operation ids match case-insensitively (Go names work too); a store
	// scope leaves other stores alone.
	m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, OperationID: "GetStore", StoreID: "102"})
	if s := get("/v1/stores/47", k47); s != 200 {
		t.Errorf("store 47 with a fault scoped to 102: %d", s)
	}
	if s := get("/v1/stores/102", k102); s != 503 {
		t.Errorf("store 102: %d, want 503", s)
	}
	m.Server.ClearFaults()
	if s := get("/v1/stores/102", k102); s != 200 {
		t.Errorf("after ClearFaults: %d", s)
	}
}

func TestFaultLatencyAndHang(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	c := newClient(t, m.URL)
	k47 := m.Server.Keys()["47"]

	// A short delay still answers.
	m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, Delay: time.Millisecond})
	if resp, err := c.GetStoreWithResponse(t.Context(), "47", key(k47)); err != nil || resp.StatusCode() != 200 {
		t.Fatalf("with small latency: %v", err)
	}

	// A long delay or a hang outlasts the caller's deadline; the mock notices
	// the caller leaving and records the request as unanswered.
	for _, f := range []mockstorelink.Fault{
		{Kind: mockstorelink.FaultLatency, Delay: time.Hour},
		{Kind: mockstorelink.FaultHang},
	} {
		m.Server.SetFaults(f)
		m.Server.ResetRequests()
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err := c.GetStoreWithResponse(ctx, "47", key(k47))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want the caller's deadline", f.Kind, err)
		}
		recs := m.Server.Requests()
		if len(recs) != 1 || recs[0].OperationID != mockstorelink.OpGetStore {
			t.Errorf("%s: records %+v", f.Kind, recs)
		}
	}
	m.Server.ClearFaults()
}

// TestCloseReleasesHang: a hanging request must not hold up shutdown.
func TestCloseReleasesHang(t *testing.T) {
	t.Parallel()
	m, err := mockstorelink.Start(mockstorelink.Options{Now: mockstorelink.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, Delay: time.Hour})
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, m.URL+"/v1/stores/47", nil)
		req.Header.Set(mockstorelink.StoreKeyHeader, m.Server.Keys()["47"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	for deadline := time.Now().Add(10 * time.Second); m.Server.RequestCount(nil) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if s := <-done; s != 503 {
		t.Errorf("hanging request got %d, want the 503 of a released hang", s)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// faultWorld is the mock every body-fault step uses, with store 47's key.
type faultWorld struct {
	m   *mockstorelink.Running
	k47 string
}

// get reads the butter's inventory at store 47 with fault f armed.
func (w faultWorld) get(t *testing.T, f mockstorelink.Fault) (int, []byte) {
	w.m.Server.SetFaults(f)
	defer w.m.Server.ClearFaults()
	status, _, body := rawGet(t, w.m.URL+inventoryPath, w.k47)
	return status, body
}

func TestFaultsBody(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	w := faultWorld{m: m, k47: m.Server.Keys()["47"]}
	runSteps(t, w, []step[faultWorld]{
		{"malformed JSON", faultBodyMalformedJSON},
		{"oversized", faultBodyOversized},
		{"rename field", faultBodyRenameField},
		{"wrong type", faultBodyWrongType},
		{"missing field", faultBodyMissingField},
		{"field value", faultBodyFieldValue},
		{"undeclared status", faultBodyUndeclaredStatus},
		{"wrong auth status", faultBodyWrongAuthStatus},
	})

	// Every drift reached the client although the mock validates its own
	// responses: drift is applied outside that check.
	if v := m.Server.Violations(); len(v) != 0 {
		t.Errorf("drift faults were caught by the mock's own validation: %v", v)
	}
}

func faultBodyMalformedJSON(t *testing.T, w faultWorld) {
	status, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON})
	if status != 200 || json.Valid(body) || len(body) == 0 {
		t.Errorf("status %d, valid %v: %s", status, json.Valid(body), body)
	}
	w.m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON})
	defer w.m.Server.ClearFaults()
	_, err := newClient(t, w.m.URL).GetInventoryWithResponse(t.Context(), "47",
		&storelinkclient.GetInventoryParams{SKU: mockstorelink.SKUButter}, key(w.k47))
	if err == nil {
		t.Error("the generated client parsed a malformed body without error")
	}
}

func faultBodyOversized(t *testing.T, w faultWorld) {
	status, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultOversized, Bytes: 3 << 20})
	if status != 200 || len(body) < 3<<20 || !json.Valid(body) {
		t.Fatalf("status %d, %d bytes, valid %v", status, len(body), json.Valid(body))
	}
	var inv storelinkclient.Inventory
	if err := json.Unmarshal(body, &inv); err != nil || inv.OnHandUnits != mockstorelink.ButterOnHandSmichov {
		t.Errorf("oversized body lost the data: %v %+v", err, inv)
	}
}

func faultBodyRenameField(t *testing.T, w faultWorld) {
	status, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftRenameField})
	obj := decodeObject(t, body)
	if _, has := obj["on_hand_units"]; has || obj["on_hand"] == nil || status != 200 {
		t.Errorf("status %d body %s", status, body)
	}
}

func faultBodyWrongType(t *testing.T, w faultWorld) {
	_, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongType})
	if v, ok := decodeObject(t, body)["on_hand_units"].(string); !ok || v != "5" {
		t.Errorf("on_hand_units should be the string \"5\": %s", body)
	}
}

func faultBodyMissingField(t *testing.T, w faultWorld) {
	_, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField})
	obj := decodeObject(t, body)
	if _, has := obj["counted_at"]; has || obj["on_hand_units"] == nil {
		t.Errorf("counted_at should be gone: %s", body)
	}
}

func faultBodyFieldValue(t *testing.T, w faultWorld) {
	status, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftFieldValue, Field: "on_hand_units", Value: json.RawMessage(`-3`)})
	if v := fmt.Sprint(decodeObject(t, body)["on_hand_units"]); status != 200 || v != "-3" {
		t.Errorf("on_hand_units should be -3: %d %s", status, body)
	}
}

func faultBodyUndeclaredStatus(t *testing.T, w faultWorld) {
	status, body := w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftUndeclaredStatus})
	if status != http.StatusTeapot || decodeObject(t, body)["on_hand_units"] == nil {
		t.Errorf("status %d body %s", status, body)
	}
	status, _ = w.get(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftUndeclaredStatus, Status: 202})
	if status != 202 {
		t.Errorf("chosen undeclared status: %d", status)
	}
}

func faultBodyWrongAuthStatus(t *testing.T, w faultWorld) {
	w.m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongAuthStatus})
	defer w.m.Server.ClearFaults()
	status, _, body := rawGet(t, w.m.URL+"/v1/stores/55", w.k47)
	if status != 404 || errorCode(t, body) != "not_found" {
		t.Errorf("another store's key: %d %s, want 404 instead of 403", status, body)
	}
	status, _, _ = rawGet(t, w.m.URL+"/v1/stores/47", "")
	if status != 200 {
		t.Errorf("no key: %d, want 200 instead of 401", status)
	}
	status, _, _ = rawGet(t, w.m.URL+"/v1/stores/47", w.k47)
	if status != 200 {
		t.Errorf("a good request is untouched: %d", status)
	}
}

// TestDriftOnEveryOperation fires each field drift on each operation that
// answers a JSON object.
func TestDriftOnEveryOperation(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	k47 := m.Server.Keys()["47"]
	paths := map[string]string{
		mockstorelink.OpListStores:            "/v1/stores",
		mockstorelink.OpGetStore:              "/v1/stores/47",
		mockstorelink.OpGetInventory:          inventoryPath,
		mockstorelink.OpListPOSTransactions:   "/v1/stores/47/pos?sku=8847291&since=2026-11-26T14:30:00Z",
		mockstorelink.OpGetReplenishmentOrder: "/v1/stores/47/replenishment/" + mockstorelink.OrderOpen,
		mockstorelink.OpGetSKU:                "/v1/skus/8847291",
		mockstorelink.OpGetSupplier:           "/v1/suppliers/SUP-MADETA",
	}
	for op, path := range paths {
		_, _, clean := rawGet(t, m.URL+path, k47)
		for _, kind := range []mockstorelink.FaultKind{mockstorelink.FaultDriftRenameField, mockstorelink.FaultDriftWrongType, mockstorelink.FaultDriftMissingField} {
			m.Server.SetFaults(mockstorelink.Fault{Kind: kind, OperationID: op, Count: 1})
			status, _, drifted := rawGet(t, m.URL+path, k47)
			if status != 200 || string(drifted) == string(clean) {
				t.Errorf("%s %s: status %d, body unchanged: %s", op, kind, status, drifted)
			}
			if len(m.Server.Faults()) != 0 {
				t.Errorf("%s %s: the fault did not fire", op, kind)
			}
		}
	}
	// POST too.
	m.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpCreateReplenishmentOrder})
	status, _, body := rawDo(t, "POST", m.URL+"/v1/stores/47/replenishment", k47,
		strings.NewReader(`{"sku":"8847291","quantity_units":12,"reason":"drift"}`))
	if obj := decodeObject(t, body); status != 201 || obj["expected_arrival"] != nil || obj["order_id"] == nil {
		t.Errorf("create with missing field: %d %s", status, body)
	}
}

func TestParseFaults(t *testing.T) {
	t.Parallel()
	got, err := mockstorelink.ParseFaults([]byte(`[
		{"kind":"latency","operation_id":"getInventory","delay":"250ms"},
		{"kind":"status","status":502,"count":3,"store_id":"47"},
		{"kind":"hang","delay":1000000},
		{"kind":"drift_field_value","operation_id":"getStore","field":"timezone","value":"Mars/Olympus"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []mockstorelink.Fault{
		{Kind: mockstorelink.FaultLatency, OperationID: "getInventory", Delay: 250 * time.Millisecond},
		{Kind: mockstorelink.FaultStatus, Status: 502, Count: 3, StoreID: "47"},
		{Kind: mockstorelink.FaultHang, Delay: time.Millisecond},
		{Kind: mockstorelink.FaultDriftFieldValue, OperationID: "getStore", Field: "timezone", Value: json.RawMessage(`"Mars/Olympus"`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseFaults (-want +got):\n%s", diff)
	}
	round, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := mockstorelink.ParseFaults(round)
	if err != nil || !cmp.Equal(got, again) {
		t.Errorf("round trip through %s: %v %+v", round, err, again)
	}
	for _, bad := range []string{
		`[{"kind":"explode"}]`,
		`[{"kind":"latency","operation_id":"deleteStore"}]`,
		`[{"kind":"latency","delay":"soon"}]`,
		`[{"kind":"latency","dealy":"1s"}]`,
		`[{"kind":"status","status":9000}]`,
		`[{"kind":"status","count":-1}]`,
		`{"kind":"status"}`,
		`[{"kind":"drift_field_value","value":1}]`,
		`[{"kind":"drift_field_value","field":"timezone"}]`,
	} {
		if _, err := mockstorelink.ParseFaults([]byte(bad)); err == nil {
			t.Errorf("ParseFaults(%s) accepted it", bad)
		}
	}
}
