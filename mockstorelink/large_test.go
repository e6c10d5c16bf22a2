package mockstorelink_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/korral/storelink/mockstorelink"
)

// The brief's scale.
const (
	chainStores = 180
	chainSKUs   = 18000
)

func startLarge(t *testing.T, seed int64) *mockstorelink.Running {
	t.Helper()
	return start(t, mockstorelink.Options{Seed: seed, Stores: chainStores, SKUs: chainSKUs})
}

// readRoutes are GET paths (with the store whose key opens them) covering
// every read operation for one store and one SKU.
func readRoutes(t *testing.T, m *mockstorelink.Running, storeID, sku string) [][2]string {
	t.Helper()
	since := url.QueryEscape(mockstorelink.DefaultNow().Add(-14 * 24 * time.Hour).Format(time.RFC3339))
	routes := [][2]string{
		{storeID, "/v1/stores/" + storeID},
		{storeID, "/v1/stores/" + storeID + "/inventory?sku=" + sku},
		{storeID, "/v1/stores/" + storeID + "/pos?sku=" + sku + "&since=" + since + "&limit=1000"},
		{storeID, "/v1/skus/" + sku},
	}
	status, _, body := rawGet(t, m.URL+"/v1/skus/"+sku, m.Server.Keys()[storeID])
	var k struct {
		SupplierID string `json:"supplier_id"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &k) != nil || k.SupplierID == "" {
		t.Fatalf("GET /v1/skus/%s: %d %s", sku, status, body)
	}
	return append(routes, [2]string{storeID, "/v1/suppliers/" + k.SupplierID})
}

// sample picks n (store, SKU) pairs across the whole large world, the
// fixtures and the last store and SKU included.
func sample(n int) [][2]string {
	r := rand.New(rand.NewPCG(35, 180))
	out := [][2]string{
		{mockstorelink.StoreIDAt(chainStores), mockstorelink.SKUAt(chainSKUs)},
		{mockstorelink.StoreSmichov, mockstorelink.SKUAt(mockstorelink.FixtureSKUs + 1)},
		{mockstorelink.StoreIDAt(mockstorelink.FixtureStores + 1), mockstorelink.SKUButter},
	}
	for len(out) < n {
		out = append(out, [2]string{mockstorelink.StoreIDAt(1 + r.IntN(chainStores)), mockstorelink.SKUAt(1 + r.IntN(chainSKUs))})
	}
	return out
}

// TestLargeWorldDeterministic: the same seed gives the same bytes; another
// seed differs on generated data.
func TestLargeWorldDeterministic(t *testing.T) {
	t.Parallel()
	a, b, other := startLarge(t, 0), startLarge(t, 0), startLarge(t, 9)
	if !equalMaps(a.Server.Keys(), b.Server.Keys()) {
		t.Fatal("two servers with the same seed hand out different keys")
	}
	differs := 0
	for _, p := range sample(40) {
		for _, rt := range readRoutes(t, a, p[0], p[1]) {
			sa, _, ba := rawGet(t, a.URL+rt[1], a.Server.Keys()[rt[0]])
			sb, _, bb := rawGet(t, b.URL+rt[1], b.Server.Keys()[rt[0]])
			if sa != http.StatusOK || sa != sb || !bytes.Equal(ba, bb) {
				t.Errorf("GET %s: %d and %d, the bodies differ: %v\n%.300s\n%.300s", rt[1], sa, sb, !bytes.Equal(ba, bb), ba, bb)
			}
			so, _, bo := rawGet(t, other.URL+rt[1], other.Server.Keys()[rt[0]])
			if so == http.StatusOK && !bytes.Equal(ba, bo) {
				differs++
			}
		}
	}
	if differs == 0 {
		t.Error("another seed answers every route with the same bytes")
	}
	_, _, la := rawGet(t, a.URL+"/v1/stores", a.Server.Keys()["47"])
	_, _, lb := rawGet(t, b.URL+"/v1/stores", b.Server.Keys()["47"])
	if !bytes.Equal(la, lb) {
		t.Error("the store lists differ")
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestLargeWorldKeepsTheFixtures: fixtures answer the same bytes in a large
// world.
func TestLargeWorldKeepsTheFixtures(t *testing.T) {
	t.Parallel()
	small, large := start(t, mockstorelink.Options{}), startLarge(t, 0)
	for id, key := range small.Server.Keys() {
		if large.Server.Keys()[id] != key {
			t.Errorf("store %s has another key in the large world", id)
		}
	}
	fixtures := 0
	for i := 1; i <= mockstorelink.FixtureStores; i++ {
		storeID := mockstorelink.StoreIDAt(i)
		for j := 1; j <= mockstorelink.FixtureSKUs; j++ {
			for _, rt := range readRoutes(t, small, storeID, mockstorelink.SKUAt(j)) {
				ss, _, bs := rawGet(t, small.URL+rt[1], small.Server.Keys()[storeID])
				sl, _, bl := rawGet(t, large.URL+rt[1], large.Server.Keys()[storeID])
				if ss != sl || !bytes.Equal(bs, bl) {
					t.Errorf("GET %s: %d in the fixture world, %d in the large one\n%.300s\n%.300s", rt[1], ss, sl, bs, bl)
				}
				fixtures++
			}
		}
	}
	for _, o := range []struct{ store, id string }{{"47", mockstorelink.OrderOpen}, {"102", mockstorelink.OrderRejected}} {
		path := "/v1/stores/" + o.store + "/replenishment/" + o.id
		_, _, bs := rawGet(t, small.URL+path, small.Server.Keys()[o.store])
		_, _, bl := rawGet(t, large.URL+path, large.Server.Keys()[o.store])
		if !bytes.Equal(bs, bl) {
			t.Errorf("order %s differs: %s / %s", o.id, bs, bl)
		}
	}
	if fixtures != mockstorelink.FixtureStores*mockstorelink.FixtureSKUs*5 {
		t.Errorf("compared %d routes", fixtures)
	}
}

// TestLargeWorldBoundaries: the last generated store and SKU exist, the
// next do not, and the fixture world has none.
func TestLargeWorldBoundaries(t *testing.T) {
	t.Parallel()
	if got := mockstorelink.StoreIDAt(chainStores); got != "1180" {
		t.Fatalf("StoreIDAt(180) = %q", got)
	}
	if got := mockstorelink.SKUAt(chainSKUs); got != "9018000" {
		t.Fatalf("SKUAt(18000) = %q", got)
	}
	if mockstorelink.StoreIDAt(mockstorelink.FixtureStores) != mockstorelink.StoreVienna || mockstorelink.StoreIDAt(0) != "" ||
		mockstorelink.StoreIDAt(mockstorelink.MaxStores+1) != "" || mockstorelink.SKUAt(mockstorelink.MaxSKUs+1) != "" {
		t.Error("StoreIDAt or SKUAt outside 1..max")
	}
	m := start(t, mockstorelink.Options{Stores: chainStores, SKUs: chainSKUs, AdminToken: "tok"})
	for id, want := range map[string]int{"1180": http.StatusOK, "1181": http.StatusNotFound} {
		if status, b := adminDo(t, http.MethodPost, m.URL+"/_admin/keys/"+id+"/rotate", "tok", ""); status != want {
			t.Errorf("rotate the key of store %s: %d, want %d: %s", id, status, want, b)
		}
	}
	keys := m.Server.Keys()
	if len(keys) != chainStores || keys["1180"] == "" || keys["1181"] != "" {
		t.Fatalf("%d keys; 1180 %t, 1181 %t", len(keys), keys["1180"] != "", keys["1181"] != "")
	}
	if ring := m.Server.DefaultKeyring(); len(ring) != chainStores {
		t.Errorf("the large world's default keyring has %d stores, want every store", len(ring))
	}
	_, _, body := rawGet(t, m.URL+"/v1/stores", keys["47"])
	var list struct {
		Stores []struct {
			StoreID string `json:"store_id"`
			Name    string `json:"name"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Stores) != chainStores {
		t.Fatalf("store list: %v, %d stores", err, len(list.Stores))
	}
	names := map[string]bool{}
	for i, s := range list.Stores {
		if s.StoreID != mockstorelink.StoreIDAt(i+1) {
			t.Errorf("store list[%d] = %s, want %s", i, s.StoreID, mockstorelink.StoreIDAt(i+1))
		}
		if names[s.Name] {
			t.Errorf("two stores are named %q", s.Name)
		}
		names[s.Name] = true
	}
	k := keys["1180"]
	for path, want := range map[string]int{
		"/v1/stores/1180":                        http.StatusOK,
		"/v1/skus/9018000":                       http.StatusOK,
		"/v1/skus/9018001":                       http.StatusNotFound,
		"/v1/skus/9000013":                       http.StatusOK,
		"/v1/skus/9000012":                       http.StatusNotFound, // index 12 is a fixture SKU, not a generated one
		"/v1/skus/09018000":                      http.StatusNotFound, // a leading zero names no SKU
		"/v1/stores/1180/inventory?sku=9018001":  http.StatusNotFound,
		"/v1/stores/1181":                        http.StatusForbidden, // no key opens it: it does not exist
		"/v1/suppliers/SUP-G0180":                http.StatusOK,
		"/v1/suppliers/SUP-G0181":                http.StatusNotFound,
		"/v1/stores/1180/inventory?sku=9018000":  http.StatusOK,
		"/v1/stores/1180/inventory?sku=8847291":  http.StatusOK,
		"/v1/stores/1180/replenishment/RO-1-001": http.StatusNotFound,
	} {
		status, _, b := rawGet(t, m.URL+path, k)
		if status != want {
			t.Errorf("GET %s: %d, want %d: %s", path, status, want, b)
		}
	}
	small := start(t, mockstorelink.Options{})
	for path, want := range map[string]int{"/v1/skus/9000013": http.StatusNotFound, "/v1/skus/" + mockstorelink.SKUMinimumOrder: http.StatusOK} {
		if status, _, b := rawGet(t, small.URL+path, small.Server.Keys()["47"]); status != want {
			t.Errorf("fixture world: GET %s: %d, want %d: %s", path, status, want, b)
		}
	}
}

// TestLargeWorldSize: a size outside the bounds is refused by New, naming
// the bound; the bounds themselves are accepted.
func TestLargeWorldSize(t *testing.T) {
	t.Parallel()
	for _, o := range []mockstorelink.Options{
		{Stores: mockstorelink.FixtureStores - 1}, {Stores: mockstorelink.MaxStores + 1}, {Stores: -1},
		{SKUs: mockstorelink.FixtureSKUs - 1}, {SKUs: mockstorelink.MaxSKUs + 1},
	} {
		if _, err := mockstorelink.New(o); err == nil {
			t.Errorf("New(stores %d, skus %d) accepted", o.Stores, o.SKUs)
		}
	}
	for _, o := range []mockstorelink.Options{
		{Stores: mockstorelink.FixtureStores, SKUs: mockstorelink.FixtureSKUs},
		{Stores: mockstorelink.MaxStores, SKUs: mockstorelink.MaxSKUs},
	} {
		s, err := mockstorelink.New(o)
		if err != nil {
			t.Fatalf("New(stores %d, skus %d): %v", o.Stores, o.SKUs, err)
		}
		if n := len(s.Keys()); n != o.Stores {
			t.Errorf("New(stores %d): %d keys", o.Stores, n)
		}
	}
}

// BenchmarkLargeWorld serves random reads of the 180-store, 18,000-SKU
// world in process; allocations per request show that nothing accumulates.
func BenchmarkLargeWorld(b *testing.B) {
	s, err := mockstorelink.New(mockstorelink.Options{Now: mockstorelink.DefaultNow, Stores: chainStores, SKUs: chainSKUs})
	if err != nil {
		b.Fatal(err)
	}
	keys := s.Keys()
	since := url.QueryEscape(mockstorelink.DefaultNow().Add(-14 * 24 * time.Hour).Format(time.RFC3339))
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		store := mockstorelink.StoreIDAt(1 + r.IntN(chainStores))
		sku := mockstorelink.SKUAt(1 + r.IntN(chainSKUs))
		var path string
		switch r.IntN(3) {
		case 0:
			path = "/v1/stores/" + store + "/inventory?sku=" + sku
		case 1:
			path = "/v1/stores/" + store + "/pos?sku=" + sku + "&since=" + since + "&limit=1000"
		default:
			path = "/v1/skus/" + sku
		}
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		req.Header.Set(mockstorelink.StoreKeyHeader, keys[store])
		rec := &recorder{header: http.Header{}}
		s.ServeHTTP(rec, req)
		if rec.status != http.StatusOK && sku != mockstorelink.SKUQuirk {
			b.Fatal(fmt.Sprint(path, rec.status, rec.body.String()))
		}
	}
}

// recorder is a minimal http.ResponseWriter for the benchmark.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// BenchmarkChainSweep measures the mock's cost of a chain-wide inventory
// and POS sweep over 180 stores.
func BenchmarkChainSweep(b *testing.B) {
	since := url.QueryEscape(mockstorelink.DefaultNow().Add(-14 * 24 * time.Hour).Format(time.RFC3339))
	for _, bc := range []struct {
		name, sku string
		validate  bool
	}{
		{"ordinary", mockstorelink.SKUAt(13), true},
		{"busy", mockstorelink.SKUAt(1000), true},
		{"busy-unvalidated", mockstorelink.SKUAt(1000), false},
	} {
		sku := bc.sku
		b.Run(bc.name, func(b *testing.B) {
			s, err := mockstorelink.New(mockstorelink.Options{Now: mockstorelink.DefaultNow, Stores: chainStores, SKUs: chainSKUs,
				NoResponseValidation: !bc.validate})
			if err != nil {
				b.Fatal(err)
			}
			keys := s.Keys()
			get := func(store, path string) []byte {
				req, _ := http.NewRequest(http.MethodGet, path, nil)
				req.Header.Set(mockstorelink.StoreKeyHeader, keys[store])
				rec := &recorder{header: http.Header{}}
				s.ServeHTTP(rec, req)
				if rec.status != http.StatusOK {
					b.Fatal(path, rec.status, rec.body.String())
				}
				return rec.body.Bytes()
			}
			pages := 0
			for b.Loop() {
				for i := 1; i <= chainStores; i++ {
					store := mockstorelink.StoreIDAt(i)
					get(store, "/v1/stores/"+store+"/inventory?sku="+sku)
					next := ""
					for {
						body := get(store, "/v1/stores/"+store+"/pos?sku="+sku+"&since="+since+"&limit=1000"+next)
						pages++
						var page struct {
							NextCursor *string `json:"next_cursor"`
						}
						if err := json.Unmarshal(body, &page); err != nil {
							b.Fatal(err)
						}
						if page.NextCursor == nil {
							break
						}
						next = "&cursor=" + url.QueryEscape(*page.NextCursor)
					}
				}
			}
			b.ReportMetric(float64(pages)/float64(b.N), "pages/sweep")
		})
	}
}
