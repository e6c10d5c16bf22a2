package e2e_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
)

// TestContractProxyBetweenServerAndMock: with the validating proxy between
// server and mock, every tool (a write included) finds no contract break.
func TestContractProxyBetweenServerAndMock(t *testing.T) {
	w := e2etest.NewWorld(t)
	var findings e2etest.SyncBuffer
	proxy, err := contract.NewProxy(contract.ProxyConfig{Upstream: w.Mock.URL, Findings: &findings})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	// The later UPSTREAM_BASE_URL wins: the server talks only to the proxy.
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "UPSTREAM_BASE_URL="+front.URL))

	p.Call("korral_list_authorized_stores", map[string]any{})
	store := map[string]any{"sku": mockstorelink.SKUButter, "store_id": mockstorelink.StoreSmichov}
	data(t, p.Call("korral_check_stock_risk", store))
	data(t, p.Call("korral_list_recent_sales", store))
	data(t, p.Call("korral_get_order_status", map[string]any{"order_id": mockstorelink.OrderOpen, "store_id": mockstorelink.StoreSmichov}))
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	key, _ := preview["idempotency_key"].(string)
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	orderID, _ := raised["order_id"].(string)
	if raised["mode"] != "raised" || orderID == "" {
		t.Fatalf("raise: %v", raised)
	}
	status := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": orderID, "store_id": mockstorelink.StoreSmichov}))
	if status["quantity_units"] != 24.0 {
		t.Fatalf("status: %v", status)
	}
	p.Stop()
	front.Close()

	sum, err := proxy.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Findings != 0 {
		t.Fatalf("the proxy found %d findings in the toolkit's traffic:\n%s", sum.Findings, findings.String())
	}
	for _, op := range []string{mockstorelink.OpCreateReplenishmentOrder, "getReplenishmentOrder", "getInventory", "listPOSTransactions"} {
		if sum.Operations[op] == nil || sum.Operations[op].Requests == 0 {
			t.Errorf("no %s went through the proxy: %+v", op, sum.Operations)
		}
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs reached the mock, want 1", n)
	}
	judge(t, w)
	if kr := w.Mock.Server.DefaultKeyring()["47"]; strings.Contains(findings.String(), kr) {
		t.Error("the findings hold a store key")
	}
}
