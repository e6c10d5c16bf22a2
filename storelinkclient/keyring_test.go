package storelinkclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// Keys that look like secrets, so that a leak into an error is easy to spot.
const (
	key47    = "sk-47-a1b2c3d4"
	key55    = "sk-55-e5f6a7b8"
	keyChain = "sk-47-chain-0912"
)

// recorder is a StoreLink stand-in on 127.0.0.1 that remembers, per request
// path, the store key and User-Agent each request carried, and answers every
// request with an empty JSON object.
type recorder struct {
	mu       sync.Mutex
	keys     map[string][]string // path -> store keys seen
	agents   []string
	requests int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[string][]string{}
	}
	r.requests++
	r.keys[req.URL.Path] = append(r.keys[req.URL.Path], req.Header.Get(sl.StoreKeyHeader))
	r.agents = append(r.agents, req.Header.Get("User-Agent"))
	writeJSON(w, http.StatusOK, `{}`)
}

func (r *recorder) seen() (int, map[string][]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for p, k := range r.keys {
		out[p] = append([]string(nil), k...)
	}
	return r.requests, out
}

// newRecorded starts a recorder and a client for it at srv.URL+prefix.
func newRecorded(t *testing.T, prefix string, opts ...sl.ClientOption) (*sl.ClientWithResponses, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := sl.NewClientWithResponses(srv.URL+prefix, append([]sl.ClientOption{sl.WithHTTPClient(srv.Client())}, opts...)...)
	if err != nil {
		t.Fatalf("NewClientWithResponses: %v", err)
	}
	return c, rec
}

// callEveryOperation calls each operation of the contract once, for store
// 47 or 55 where it names one, and returns the first error of each call by
// the path it went to.
func callEveryOperation(ctx context.Context, c *sl.ClientWithResponses) map[string]error {
	errs := map[string]error{}
	note := func(path string, err error) { errs[path] = err }
	_, err := c.ListStoresWithResponse(ctx)
	note("/v1/stores", err)
	_, err = c.GetSKUWithResponse(ctx, "8847291")
	note("/v1/skus/8847291", err)
	_, err = c.GetSupplierWithResponse(ctx, "SUP-MADETA")
	note("/v1/suppliers/SUP-MADETA", err)
	_, err = c.GetStoreWithResponse(ctx, "47")
	note("/v1/stores/47", err)
	_, err = c.GetInventoryWithResponse(ctx, "55", &sl.GetInventoryParams{SKU: "8847291"})
	note("/v1/stores/55/inventory", err)
	_, err = c.ListPOSTransactionsWithResponse(ctx, "47", &sl.ListPOSTransactionsParams{SKU: "8847291", Since: at(11, 27, 10, 0, 0)})
	note("/v1/stores/47/pos", err)
	_, err = c.CreateReplenishmentOrderWithResponse(ctx, "55", sl.CreateReplenishmentOrderJSONRequestBody{SKU: "8847291", QuantityUnits: 12, Reason: "restock"})
	note("/v1/stores/55/replenishment", err)
	_, err = c.GetReplenishmentOrderWithResponse(ctx, "47", "RO-1")
	note("/v1/stores/47/replenishment/RO-1", err)
	return errs
}

// wantKeys is the key each operation of callEveryOperation must carry.
var wantKeys = map[string]string{
	"/v1/stores":                       keyChain,
	"/v1/skus/8847291":                 keyChain,
	"/v1/suppliers/SUP-MADETA":         keyChain,
	"/v1/stores/47":                    key47,
	"/v1/stores/55/inventory":          key55,
	"/v1/stores/47/pos":                key47,
	"/v1/stores/55/replenishment":      key55,
	"/v1/stores/47/replenishment/RO-1": key47,
}

func TestKeyringSendsEachStoreItsOwnKey(t *testing.T) {
	keys := map[string]string{"47": key47, "55": key55}
	for _, tc := range []struct {
		name, prefix string
		opts         []sl.ClientOption
	}{
		{"map, chain key after", "", []sl.ClientOption{sl.WithKeyring(keys), sl.WithChainKey(keyChain)}},
		{"map, chain key before", "", []sl.ClientOption{sl.WithChainKey(keyChain), sl.WithKeyring(keys)}},
		{"lookup function", "", []sl.ClientOption{sl.WithChainKey(keyChain), sl.WithStoreKeys(func(id sl.StoreID) (string, bool) {
			k, ok := keys[id]
			return k, ok
		})}},
		// A server address with a path of its own: the store is read after
		// it, even when the prefix itself looks like another store's path.
		{"server path prefix", "/v1/stores/99", []sl.ClientOption{sl.WithKeyring(keys), sl.WithChainKey(keyChain)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := newRecorded(t, tc.prefix, tc.opts...)
			for path, err := range callEveryOperation(context.Background(), c) {
				if err != nil {
					t.Errorf("%s: %v", path, err)
				}
			}
			n, seen := rec.seen()
			if n != len(wantKeys) {
				t.Errorf("the server saw %d requests, want %d", n, len(wantKeys))
			}
			for path, want := range wantKeys {
				got := seen[tc.prefix+path]
				if len(got) != 1 || got[0] != want {
					t.Errorf("%s carried keys %q, want [%q]", path, got, want)
				}
			}
		})
	}
}

func TestKeyringWithoutChainKeyRefusesChainWideReads(t *testing.T) {
	c, rec := newRecorded(t, "", sl.WithKeyring(map[string]string{"47": key47, "55": key55}))
	errs := callEveryOperation(context.Background(), c)
	for path, want := range wantKeys {
		err := errs[path]
		if want != keyChain {
			if err != nil {
				t.Errorf("%s: %v", path, err)
			}
			continue
		}
		var missing *sl.MissingKeyError
		if !errors.As(err, &missing) || !missing.ChainWide || missing.StoreID != "" {
			t.Errorf("%s: got %v (%#v), want a chain-wide *MissingKeyError", path, err, missing)
			continue
		}
		if !strings.Contains(err.Error(), "WithChainKey") {
			t.Errorf("%s: %q does not say how to fix it", path, err)
		}
	}
	n, seen := rec.seen()
	for path, want := range wantKeys {
		if want == keyChain && len(seen[path]) != 0 {
			t.Errorf("%s reached the server without a key", path)
		}
	}
	if n != 5 {
		t.Errorf("the server saw %d requests, want the 5 store requests", n)
	}
}

func TestKeyringRefusesStoreWithoutKeyAndSendsNothing(t *testing.T) {
	// The keyring holds 47 only; 55's calls must fail here, not at StoreLink.
	// Store 47's key would open nothing at 55, but it must not travel there.
	c, rec := newRecorded(t, "", sl.WithKeyring(map[string]string{"47": key47}), sl.WithChainKey(keyChain))
	ctx := context.Background()
	_, err := sl.Result(c.GetInventoryWithResponse(ctx, "55", &sl.GetInventoryParams{SKU: "8847291"}))
	var missing *sl.MissingKeyError
	if !errors.As(err, &missing) || missing.StoreID != "55" || missing.ChainWide || missing.Malformed {
		t.Fatalf("got %v (%#v), want *MissingKeyError for store 55", err, missing)
	}
	if want := "storelink: no store key for store 55; request not sent"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// A per-call key does not stand in for the keyring's.
	_, err = c.CreateReplenishmentOrderWithResponse(ctx, "55", sl.CreateReplenishmentOrderJSONRequestBody{SKU: "8847291", QuantityUnits: 12, Reason: "restock"}, sl.WithStoreKey(key55))
	if !errors.As(err, &missing) || missing.StoreID != "55" {
		t.Fatalf("order for 55: got %v, want *MissingKeyError", err)
	}
	if n, seen := rec.seen(); n != 0 {
		t.Errorf("the server saw %d requests (%v), want none", n, seen)
	}
}

func TestKeyringRefusesMalformedStoreIDs(t *testing.T) {
	// Whatever the keyring holds under such ids, no key is chosen for a path
	// whose store cannot be read plainly.
	keys := map[string]string{"": key47, "47/../55": key47, strings.Repeat("4", 40): key47, "47 ": key47}
	c, rec := newRecorded(t, "", sl.WithKeyring(keys), sl.WithChainKey(keyChain))
	for id := range keys {
		_, err := c.GetStoreWithResponse(context.Background(), id)
		var missing *sl.MissingKeyError
		if !errors.As(err, &missing) || !missing.Malformed || missing.StoreID != "" {
			t.Errorf("store %q: got %v (%#v), want a malformed *MissingKeyError", id, err, missing)
		}
	}
	if n, seen := rec.seen(); n != 0 {
		t.Errorf("the server saw %d requests (%v), want none", n, seen)
	}
}

func TestKeyringKeysNeverInErrors(t *testing.T) {
	bad := map[string]string{"47": "", "55": "sk-55\r\nX-Other: " + key55, "60": "sk-60\x7f" + key47}
	c, rec := newRecorded(t, "", sl.WithKeyring(bad))
	for id := range bad {
		_, err := c.GetStoreWithResponse(context.Background(), id)
		if err == nil {
			t.Errorf("store %s: a bad key was accepted", id)
			continue
		}
		if containsAny(err.Error(), key47, key55, "sk-") {
			t.Errorf("store %s: error %q repeats the key", id, err)
		}
	}
	if n, _ := rec.seen(); n != 0 {
		t.Errorf("the server saw %d requests, want none", n)
	}

	// A chain key that is not a key fails construction, silently about it.
	_, err := sl.NewClientWithResponses("http://127.0.0.1:1", sl.WithChainKey("sk-chain\n"+key47))
	if err == nil || containsAny(err.Error(), key47, "sk-") {
		t.Errorf("bad chain key: got %v, want an error that does not repeat it", err)
	}

	// A server that echoes the key the keyring chose: the typed error
	// redacts it.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, `{"error":{"code":"store_forbidden","message":"key `+r.Header.Get(sl.StoreKeyHeader)+` refused"}}`)
	}))
	t.Cleanup(echo.Close)
	ec, err := sl.NewClientWithResponses(echo.URL, sl.WithHTTPClient(echo.Client()), sl.WithKeyring(map[string]string{"47": key47}), sl.WithChainKey(keyChain))
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []func() error{
		func() error { _, err := sl.Result(ec.GetStoreWithResponse(context.Background(), "47")); return err },
		func() error { _, err := sl.Result(ec.ListStoresWithResponse(context.Background())); return err },
	} {
		err := call()
		var apiErr *sl.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
			t.Fatalf("got %v, want a 403 *APIError", err)
		}
		if containsAny(err.Error(), key47, keyChain) {
			t.Errorf("error %q repeats a key", err)
		}
	}
}

func TestKeyringPerCallKeyReplacesKeyringChoice(t *testing.T) {
	c, rec := newRecorded(t, "", sl.WithKeyring(map[string]string{"47": key47}))
	if _, err := c.GetStoreWithResponse(context.Background(), "47", sl.WithStoreKey(key55)); err != nil {
		t.Fatal(err)
	}
	if _, seen := rec.seen(); len(seen["/v1/stores/47"]) != 1 || seen["/v1/stores/47"][0] != key55 {
		t.Errorf("store 47 carried %q, want the per-call key", seen["/v1/stores/47"])
	}
}

func TestKeyringConcurrentCalls(t *testing.T) {
	c, rec := newRecorded(t, "", sl.WithKeyring(map[string]string{"47": key47, "55": key55}), sl.WithChainKey(keyChain))
	var wg sync.WaitGroup
	for i := range 20 {
		store := []sl.StoreID{"47", "55"}[i%2]
		wg.Go(func() {
			if _, err := c.GetStoreWithResponse(context.Background(), store); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	_, seen := rec.seen()
	for path, want := range map[string]string{"/v1/stores/47": key47, "/v1/stores/55": key55} {
		if len(seen[path]) != 10 {
			t.Errorf("%s: %d requests, want 10", path, len(seen[path]))
		}
		for _, got := range seen[path] {
			if got != want {
				t.Errorf("%s carried %q, want %q", path, got, want)
			}
		}
	}
}

func TestKeyringOptionsRefuseNil(t *testing.T) {
	if _, err := sl.NewClientWithResponses("http://127.0.0.1:1", sl.WithStoreKeys(nil)); err == nil {
		t.Error("WithStoreKeys(nil) was accepted")
	}
	if _, err := sl.NewClientWithResponses("http://127.0.0.1:1", sl.WithChainKey("")); err == nil {
		t.Error("WithChainKey(\"\") was accepted")
	}
}

func TestKeyringCopiesTheMap(t *testing.T) {
	keys := map[string]string{"47": key47}
	c, rec := newRecorded(t, "", sl.WithKeyring(keys))
	keys["47"] = key55
	keys["55"] = key55
	if _, err := c.GetStoreWithResponse(context.Background(), "47"); err != nil {
		t.Fatal(err)
	}
	var missing *sl.MissingKeyError
	if _, err := c.GetStoreWithResponse(context.Background(), "55"); !errors.As(err, &missing) {
		t.Errorf("store 55 added to the map later: got %v, want *MissingKeyError", err)
	}
	if _, seen := rec.seen(); len(seen["/v1/stores/47"]) != 1 || seen["/v1/stores/47"][0] != key47 {
		t.Errorf("store 47 carried %q, want the key the map held at construction", seen["/v1/stores/47"])
	}
}
