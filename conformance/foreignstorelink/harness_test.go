package foreignstorelink_test

// The test harness: a double on a settable clock, requests with a store
// key, and checks of answers against the contract and its known deviations.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/korral/storelink/conformance/foreignstorelink"
	"github.com/korral/storelink/openapi"
)

var (
	key47  = foreignstorelink.DefaultKeys["47"]
	key102 = foreignstorelink.DefaultKeys["102"]
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t     *testing.T
	s     *foreignstorelink.Server
	url   string
	clock *clock
}

func start(t *testing.T, keys map[string]string) *harness {
	t.Helper()
	c := &clock{t: foreignstorelink.DefaultNow()}
	s := foreignstorelink.New(foreignstorelink.Options{Now: c.now, Keys: keys})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &harness{t: t, s: s, url: srv.URL, clock: c}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) do(method, path, key, body string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(foreignstorelink.KeyHeader, key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, k := range []string{key47, key102} {
		if strings.Contains(string(b), k) || strings.Contains(fmt.Sprint(res.Header), k) {
			h.t.Fatalf("%s %s: the response echoes a key", method, path)
		}
	}
	return response{res.StatusCode, res.Header, b}
}

// get asks for path and wants status; it returns the decoded body.
func (h *harness) get(path, key string, status int) map[string]any {
	h.t.Helper()
	return h.want(h.do(http.MethodGet, path, key, ""), status, "GET "+path)
}

func (h *harness) post(path, key, body string, status int) map[string]any {
	h.t.Helper()
	return h.want(h.do(http.MethodPost, path, key, body), status, "POST "+path)
}

func (h *harness) want(res response, status int, what string) map[string]any {
	h.t.Helper()
	if res.status != status {
		h.t.Fatalf("%s: status %d, want %d; body %s", what, res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		h.t.Fatalf("%s: Content-Type %q", what, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(res.body, &m); err != nil {
		h.t.Fatalf("%s: body is not a JSON object: %v: %s", what, err, res.body)
	}
	return m
}

// keys returns an object's property names, sorted.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: properties %v, want %v", what, got, want)
	}
}

// contract validates v against a component schema of openapi/storelink.yaml.
func contract(t *testing.T, schema string, v any) error {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[schema]
	if !ok || ref.Value == nil {
		t.Fatalf("no schema %s in the contract", schema)
	}
	// Round-trip so that the value has the types VisitJSON expects.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		t.Fatal(err)
	}
	return ref.Value.VisitJSON(plain, openapi3.MultiErrors(), openapi3.EnableFormatValidation())
}

func mustConform(t *testing.T, schema string, v any) {
	t.Helper()
	if err := contract(t, schema, v); err != nil {
		t.Fatalf("%s does not keep the contract: %v\n%v", schema, err, v)
	}
}

func mustBreak(t *testing.T, schema string, v any) {
	t.Helper()
	if err := contract(t, schema, v); err == nil {
		t.Fatalf("%s keeps the contract, but the double must depart from it here: %v", schema, v)
	}
}

func rename(m map[string]any, from, to string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k == from {
			k = to
		}
		out[k] = v
	}
	return out
}

func without(m map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func isDetailText(t *testing.T, what string, m map[string]any) string {
	t.Helper()
	wantKeys(t, what, m, "detail")
	s, ok := m["detail"].(string)
	if !ok || s == "" {
		t.Fatalf("%s: detail is %#v, want a non-empty string", what, m["detail"])
	}
	return s
}

var (
	supplierID = regexp.MustCompile(`^sup_[0-9a-f]{8}$`)
	orderID    = regexp.MustCompile(`^rpl_[0-9a-f]{10}$`)
)

func orderBody(qty int) string {
	return fmt.Sprintf(`{"sku":"8847291","quantity_units":%d,"reason":"Projected to sell out before close."}`, qty)
}

func posPath(store, sku string, since time.Time, extra string) string {
	return fmt.Sprintf("/v1/stores/%s/pos?sku=%s&since=%s%s", store, sku, url.QueryEscape(since.Format(time.RFC3339)), extra)
}
