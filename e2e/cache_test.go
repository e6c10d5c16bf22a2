package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// countingProxy counts the mock's requests by operation and by the key's
// store, and can add Cache-Control to master-data answers.
type countingProxy struct {
	srv  *httptest.Server
	mock *mockstorelink.Running

	mu           sync.Mutex
	counts       map[string]int // operation -> requests
	byKey        map[string]int // operation + " " + store of the key -> requests
	cacheControl string
}

func newCountingProxy(t *testing.T, w *e2etest.World) *countingProxy {
	t.Helper()
	target, err := url.Parse(w.Mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{mock: w.Mock, counts: map[string]int{}, byKey: map[string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(resp *http.Response) error {
			p.mu.Lock()
			cc := p.cacheControl
			p.mu.Unlock()
			if op := operationOf(resp.Request.URL.Path); cc != "" && (op == mockstorelink.OpGetStore || op == mockstorelink.OpGetSKU || op == mockstorelink.OpGetSupplier) {
				resp.Header.Set("Cache-Control", cc)
			}
			return nil
		},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		keyStore := ""
		for store, k := range p.mock.Server.Keys() {
			if k == r.Header.Get("X-Korral-Store-Key") {
				keyStore = store
			}
		}
		op := operationOf(r.URL.Path)
		p.mu.Lock()
		p.counts[op]++
		p.byKey[op+" "+keyStore]++
		p.mu.Unlock()
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// operationOf names the contract operation of a read's path.
func operationOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "stores":
		return mockstorelink.OpGetStore
	case len(parts) == 3 && parts[2] == "inventory":
		return mockstorelink.OpGetInventory
	case len(parts) == 3 && parts[2] == "pos":
		return mockstorelink.OpListPOSTransactions
	case len(parts) == 2 && parts[0] == "skus":
		return mockstorelink.OpGetSKU
	case len(parts) == 2 && parts[0] == "suppliers":
		return mockstorelink.OpGetSupplier
	}
	return path
}

// snapshot returns the counts by operation, and by operation and store.
func (p *countingProxy) snapshot() (map[string]int, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts, byKey := map[string]int{}, map[string]int{}
	for k, v := range p.counts {
		counts[k] = v
	}
	for k, v := range p.byKey {
		byKey[k] = v
	}
	return counts, byKey
}

func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts, p.byKey = map[string]int{}, map[string]int{}
}

func (p *countingProxy) setCacheControl(cc string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cacheControl = cc
}

// masterOps are the three master-data reads.
var masterOps = []string{mockstorelink.OpGetStore, mockstorelink.OpGetSKU, mockstorelink.OpGetSupplier}

// want compares the counts of the given operations.
func (p *countingProxy) want(t *testing.T, when string, want map[string]int) {
	t.Helper()
	counts, _ := p.snapshot()
	for op, n := range want {
		if counts[op] != n {
			t.Errorf("%s: %d %s requests, want %d (all: %v)", when, counts[op], op, n, counts)
		}
	}
}

func masterEach(n int) map[string]int {
	m := map[string]int{}
	for _, op := range masterOps {
		m[op] = n
	}
	return m
}

// cacheServer starts the real binary against the proxy.
func cacheServer(t *testing.T, w *e2etest.World, proxy *countingProxy, extra ...string) *e2etest.Proc {
	t.Helper()
	env := w.Env(extra...)
	env[0] = "UPSTREAM_BASE_URL=" + proxy.srv.URL
	return e2etest.StartServer(t, env)
}

// riskOK checks one store's butter risk and requires an answer for that store.
func riskOK(t *testing.T, p *e2etest.Proc, store string) {
	t.Helper()
	env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": store})
	if env["ok"] != true {
		t.Fatalf("risk check of %s: %v", store, env)
	}
	if st := data(t, env)["stores"].([]any)[0].(map[string]any); st["store_id"] != store {
		t.Fatalf("asked for %s, answered for %v", store, st["store_id"])
	}
}

// TestMasterDataCacheEndToEnd counts StoreLink requests: cold, warm,
// concurrent, with Cache-Control, after expiry, after key rotation, per store.
func TestMasterDataCacheEndToEnd(t *testing.T) {
	t.Run("8 concurrent cold checks of one store and SKU, then a warm one", cacheColdChecksShareReads)

	t.Run("each store's master data is read with its own key", cacheKeyedByStore)

	t.Run("no-store and MASTER_DATA_TTL=0 keep nothing", cacheKeepsNothing)

	t.Run("max-age=1 expires after a second", cacheMaxAgeExpires)

	t.Run("a key rotated mid-run still reads its own store", cacheKeyRotated)

	t.Run("an answer for another store is never kept or served", cacheWrongStore)
}

// cacheWorld is a world behind a counting proxy whose master data carries
// Cache-Control cacheControl ("" for none).
func cacheWorld(t *testing.T, cacheControl string) (*e2etest.World, *countingProxy, *e2etest.Proc) {
	t.Helper()
	w := e2etest.NewWorld(t)
	proxy := newCountingProxy(t, w)
	if cacheControl != "" {
		proxy.setCacheControl(cacheControl)
	}
	return w, proxy, cacheServer(t, w, proxy)
}

// cacheColdChecksShareReads: 8 concurrent cold checks read master data once;
// a warm check reads only stock and sales.
func cacheColdChecksShareReads(t *testing.T) {
	_, proxy, p := cacheWorld(t, "")
	const checks = 8
	answers := make(chan string, checks)
	var wg sync.WaitGroup
	for range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- onHand(p, "47")
		}()
	}
	wg.Wait()
	close(answers)
	for a := range answers {
		if !strings.HasPrefix(a, "on_hand=") {
			t.Fatalf("a concurrent check: %s", a)
		}
	}
	cold := masterEach(1)
	cold[mockstorelink.OpGetInventory], cold[mockstorelink.OpListPOSTransactions] = checks, checks
	proxy.want(t, "8 concurrent cold checks", cold)

	proxy.reset()
	riskOK(t, p, "47")
	counts, _ := proxy.snapshot()
	if n := counts[mockstorelink.OpGetInventory] + counts[mockstorelink.OpListPOSTransactions]; n != 2 || len(counts) != 2 {
		t.Fatalf("a warm risk check sent %v, want one inventory and one POS request", counts)
	}
}

// cacheKeyedByStore: each store's master data is read with its own key.
func cacheKeyedByStore(t *testing.T) {
	_, proxy, p := cacheWorld(t, "")
	// Sequential first, so 102's reads could only be spared by 47's.
	riskOK(t, p, "47")
	riskOK(t, p, "102")
	for range 2 {
		env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"47", "102"}})
		for i, store := range []string{"47", "102"} {
			if st := data(t, env)["stores"].([]any)[i].(map[string]any); st["store_id"] != store || st["risk"] == nil {
				t.Fatalf("entry %d: %v", i, st)
			}
		}
	}
	_, byKey := proxy.snapshot()
	for _, store := range []string{"47", "102"} {
		for _, op := range masterOps {
			if n := byKey[op+" "+store]; n != 1 {
				t.Errorf("%s with store %s's key: %d requests, want 1 (all: %v)", op, store, n, byKey)
			}
		}
	}
}

// cacheKeepsNothing: no-store and MASTER_DATA_TTL=0 keep nothing.
func cacheKeepsNothing(t *testing.T) {
	w, proxy, p := cacheWorld(t, "no-store")
	riskOK(t, p, "47")
	riskOK(t, p, "47")
	proxy.want(t, "no-store", masterEach(2))

	proxy.setCacheControl("")
	proxy.reset()
	off := cacheServer(t, w, proxy, "MASTER_DATA_TTL=0")
	riskOK(t, off, "47")
	riskOK(t, off, "47")
	proxy.want(t, "MASTER_DATA_TTL=0", masterEach(2))
}

// cacheMaxAgeExpires: max-age=1 expires after a second.
func cacheMaxAgeExpires(t *testing.T) {
	_, proxy, p := cacheWorld(t, "max-age=1")
	riskOK(t, p, "47")
	proxy.want(t, "cold", masterEach(1))
	// Not timed: after this wait the entries are past max-age on any machine.
	time.Sleep(1100 * time.Millisecond)
	riskOK(t, p, "47")
	proxy.want(t, "after max-age", masterEach(2))
}

// cacheKeyRotated: a rotated key reads its store once with the new key, never the old.
func cacheKeyRotated(t *testing.T) {
	w, proxy, p := cacheWorld(t, "")
	riskOK(t, p, "47")
	riskOK(t, p, "102")

	newKey := w.Mock.Server.RotateKey("47")
	kr := w.Mock.Server.Keys()
	w.WriteKeyring(t, map[string]string{"47": newKey, "102": kr["102"]})
	proxy.reset()
	// The first check retries a 401 with the new key, then rereads the
	// master data once with it.
	for range 3 {
		riskOK(t, p, "47")
	}
	riskOK(t, p, "102")
	_, byKey := proxy.snapshot()
	for _, op := range masterOps {
		if n := byKey[op+" 47"]; n != 1 {
			t.Errorf("%s with 47's new key: %d requests, want 1 (all: %v)", op, n, byKey)
		}
		if n := byKey[op+" "]; n != 0 {
			t.Errorf("%s with a key StoreLink no longer knows: %d requests (all: %v)", op, n, byKey)
		}
		if n := byKey[op+" 102"]; n != 0 {
			t.Errorf("%s for 102, whose entries are live: %d requests", op, n)
		}
	}
	if strings.Contains(p.Stderr.String(), newKey) {
		t.Fatal("the new key appears in the logs")
	}
}

// cacheWrongStore: an answer for another store is never kept or served.
func cacheWrongStore(t *testing.T) {
	w, proxy, p := cacheWorld(t, "")
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftFieldValue, OperationID: mockstorelink.OpGetStore,
		StoreID: "47", Field: "store_id", Value: json.RawMessage(`"102"`)})
	env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	if c := e2etest.Code(env); c != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(fmt.Sprint(env), "store.store_id") {
		t.Fatalf("47 answered as 102: %v", env)
	}
	w.Mock.Server.ClearFaults()
	riskOK(t, p, "47")
	riskOK(t, p, "102")
	proxy.want(t, "after the wrong answer", map[string]int{mockstorelink.OpGetStore: 3})
}

// onHand runs one risk check from any goroutine and reports the on-hand figure or the error.
func onHand(p *e2etest.Proc, store string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.CS.CallTool(ctx, &mcp.CallToolParams{Name: "korral_check_stock_risk",
		Arguments: map[string]any{"sku": mockstorelink.SKUButter, "store_id": store}})
	if err != nil {
		return err.Error()
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil || env["ok"] != true {
		return fmt.Sprintf("not ok: %v %v", err, env)
	}
	st := env["data"].(map[string]any)["stores"].([]any)[0].(map[string]any)
	risk, _ := st["risk"].(map[string]any)
	if st["store_id"] != store || risk == nil {
		return fmt.Sprintf("answered %v", st)
	}
	return fmt.Sprintf("on_hand=%v", risk["on_hand_units"])
}
