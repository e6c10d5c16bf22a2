package e2e_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// TestTenThousandStoreKeyringIsListedInBoundedPages: a huge keyring is listed
// at most 200 stores an answer, asking StoreLink only for those, with the total.
func TestTenThousandStoreKeyringIsListedInBoundedPages(t *testing.T) {
	const stores, page = 10000, 200
	w := e2etest.NewWorld(t)
	kr := make(map[string]string, stores)
	for i := 1; i <= stores; i++ {
		kr[fmt.Sprint(i)] = fmt.Sprintf("sk-bulk-%05d", i)
	}
	w.WriteKeyring(t, kr)
	p := e2etest.StartServer(t, w.Env())
	reads := func() int {
		return w.Requests(func(r mockstorelink.RequestRecord) bool { return r.OperationID == "getStore" })
	}
	before := reads()
	d := data(t, p.Call("korral_list_authorized_stores", map[string]any{}))
	if got := len(d["stores"].([]any)); got != page || d["count"] != float64(page) {
		t.Fatalf("first page lists %d stores (count %v), want %d", got, d["count"], page)
	}
	if d["truncated"] != true || d["count_total_available"] != float64(stores) || d["next_after_store_id"] != fmt.Sprint(page) {
		t.Fatalf("first page: truncated %v, total %v, next %v", d["truncated"], d["count_total_available"], d["next_after_store_id"])
	}
	if sent := reads() - before; sent != page {
		t.Fatalf("the first page sent %d store reads to StoreLink, want %d", sent, page)
	}
	last := data(t, p.Call("korral_list_authorized_stores", map[string]any{"after_store_id": fmt.Sprint(stores - 3)}))
	if len(last["stores"].([]any)) != 3 || last["truncated"] != false {
		t.Fatalf("last page: %v stores, truncated %v", len(last["stores"].([]any)), last["truncated"])
	}
	if sent := reads() - before; sent != page+3 {
		t.Fatalf("two pages sent %d store reads, want %d", sent, page+3)
	}
}

// TestKeyringWithInvalidUTF8IsRefused: a non-UTF-8 key stops start-up with
// exit 2, naming the byte's place and not the key.
func TestKeyringWithInvalidUTF8IsRefused(t *testing.T) {
	w := e2etest.NewWorld(t)
	if err := os.WriteFile(w.KeyringPath, []byte("{\"47\": \"sk-live-\xff47\"}"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := w.Requests(func(mockstorelink.RequestRecord) bool { return true })
	_, stderr, exit := e2etest.RunCLI(t, w.Env())
	if exit != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "not valid UTF-8 (first bad byte at offset 16)") {
		t.Fatalf("exit %d, stderr %q", exit, stderr)
	}
	if strings.Contains(stderr, "sk-live") {
		t.Fatalf("the error echoes the key: %q", stderr)
	}
	if sent := w.Requests(func(mockstorelink.RequestRecord) bool { return true }) - before; sent != 0 {
		t.Fatalf("%d requests reached StoreLink", sent)
	}
}

// TestRenamedRequiredFieldIsAContractError: a renamed on_hand_units is named
// with its rule, never read as a count.
func TestRenamedRequiredFieldIsAContractError(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftRenameField, OperationID: mockstorelink.OpGetInventory})
	env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	e, _ := env["error"].(map[string]any)
	if e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(fmt.Sprint(e["message"]), "inventory.on_hand: not in the contract; inventory.on_hand_units renamed? (rule schema.renamed)") {
		t.Fatalf("risk check with on_hand_units renamed: %v", env)
	}
}
