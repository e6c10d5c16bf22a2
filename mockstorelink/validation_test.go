package mockstorelink_test

import (
	"strings"
	"testing"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/mockstorelink/internal/api"
)

// breakInventory makes the inventory handler return an on-hand count far
// outside the contract's range.
func breakInventory(op string, resp any) any {
	if r, ok := resp.(api.GetInventory200JSONResponse); ok && op == "GetInventory" {
		r.OnHandUnits = 5_000_000
		return r
	}
	return resp
}

func TestResponseValidationCatchesBrokenResponse(t *testing.T) {
	t.Parallel()
	m := startRaw(t, mockstorelink.Options{Now: mockstorelink.DefaultNow}, false)
	mockstorelink.SetResponseMutator(m.Server, breakInventory)
	k47 := m.Server.Keys()["47"]

	status, _, body := rawGet(t, m.URL+inventoryPath, k47)
	if status != 500 || errorCode(t, body) != "contract_violation" {
		t.Fatalf("broken response: %d %s, want 500 contract_violation", status, body)
	}
	v := m.Server.Violations()
	if len(v) != 1 || !strings.Contains(v[0], "/v1/stores/47/inventory") {
		t.Fatalf("Violations() = %q", v)
	}
	// Other operations are unaffected.
	if status, _, _ := rawGet(t, m.URL+"/v1/stores/47", k47); status != 200 {
		t.Errorf("getStore: %d", status)
	}
	mockstorelink.SetResponseMutator(m.Server, nil)
	if status, _, _ := rawGet(t, m.URL+inventoryPath, k47); status != 200 {
		t.Errorf("after removing the mutator: %d", status)
	}
	if n := len(m.Server.Violations()); n != 1 {
		t.Errorf("%d violations, want still 1", n)
	}
}

func TestNoResponseValidation(t *testing.T) {
	t.Parallel()
	m := startRaw(t, mockstorelink.Options{Now: mockstorelink.DefaultNow, NoResponseValidation: true}, false)
	mockstorelink.SetResponseMutator(m.Server, breakInventory)
	status, _, body := rawGet(t, m.URL+inventoryPath, m.Server.Keys()["47"])
	if status != 200 || !strings.Contains(string(body), `"on_hand_units":5000000`) {
		t.Errorf("with validation off the broken body should pass: %d %s", status, body)
	}
	if v := m.Server.Violations(); len(v) != 0 {
		t.Errorf("Violations() = %q with validation off", v)
	}
	// Requests are still checked.
	if status, _, _ := rawGet(t, m.URL+"/v1/stores/47/inventory?sku=x", m.Server.Keys()["47"]); status != 400 {
		t.Errorf("bad request with response validation off: %d", status)
	}
}
