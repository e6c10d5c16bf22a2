package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// validatesNothing raises an order for every POST to store 47's
// replenishment, and returns the wrapper and the raised ids.
func validatesNothing() (func(http.Handler) http.Handler, func() []string) {
	var mu sync.Mutex
	var raised []string
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1/stores/47/replenishment" {
				next.ServeHTTP(w, r)
				return
			}
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			id := fmt.Sprintf("rpl_%d", len(raised)+1)
			raised = append(raised, id)
			mu.Unlock()
			writeJSON(w, 201, map[string]any{"order_id": id, "store_id": "47", "sku": req["sku"], "quantity_units": req["quantity_units"],
				"reason": req["reason"], "status": "submitted",
				"submitted_at": "2026-11-27T14:30:00+01:00", "expected_arrival": "2026-11-29T06:00:00+01:00"})
		})
	}
	return wrap, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), raised...)
	}
}

// rendered is the report in every format, joined.
func rendered(t *testing.T, rep *Report) string {
	t.Helper()
	var all bytes.Buffer
	for _, format := range Formats {
		var b bytes.Buffer
		if err := rep.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		all.WriteString(format + ":\n" + b.String())
	}
	return all.String()
}

// TestAcceptedNegativeWriteLeavesOneAnnouncedOrder: against a StoreLink that
// validates nothing, a check leaves one order by default, named in every
// report format; with --max-orders 10 every write is sent and named.
func TestAcceptedNegativeWriteLeavesOneAnnouncedOrder(t *testing.T) {
	t.Parallel()
	f := newFake()
	wrap, raised := validatesNothing()
	cfg := config(f, f.serve(t, wrap).URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	if got := raised(); len(got) != 1 {
		t.Fatalf("StoreLink raised %v, want exactly one order", got)
	}
	if len(rep.OrdersCreated) != 1 || rep.OrdersCreated[0].OrderID != "rpl_1" || rep.OrdersCreated[0].Intended ||
		rep.OrdersCreated[0].StoreID != "47" || rep.OrdersCreated[0].Probe != "no key" {
		t.Errorf("orders created %+v, want rpl_1 at store 47 by the no-key probe", rep.OrdersCreated)
	}
	p := findProbe(t, rep, opCreateOrder, "no key")
	var named bool
	for _, fd := range p.Findings {
		named = named || fd.Kind == FindingOrderRaised && strings.Contains(strings.Join(fd.Details, " "), "rpl_1")
	}
	if p.Verdict != Drift || !named {
		t.Errorf("no-key write: %s %+v, want drift with a finding naming rpl_1", p.Verdict, p.Findings)
	}
	for _, name := range []string{"another store's key", "quantity_units=0", "quantity below the supplier's minimum", "raise one order"} {
		if p := findProbe(t, rep, opCreateOrder, name); p.Verdict != Skipped || !strings.Contains(p.Detail, "--max-orders") || !strings.Contains(p.Detail, "rpl_1") {
			t.Errorf("%s: %s %q, want held by --max-orders, naming rpl_1", name, p.Verdict, p.Detail)
		}
	}
	if !slicesContainsFunc(rep.Causes, func(c Cause) bool { return c.Kind == FindingOrderRaised }) {
		t.Errorf("no cause of kind %s: %+v", FindingOrderRaised, rep.Causes)
	}
	out := rendered(t, rep)
	for _, format := range Formats {
		_, section, _ := strings.Cut(out, format+":\n")
		for _, other := range Formats {
			if other != format {
				section, _, _ = strings.Cut(section, other+":\n")
			}
		}
		if !strings.Contains(section, "rpl_1") {
			t.Errorf("the %s report does not name the order rpl_1", format)
		}
	}

	f = newFake()
	wrap, raised = validatesNothing()
	cfg = config(f, f.serve(t, wrap).URL)
	cfg.AllowWrites, cfg.WriteStore, cfg.MaxOrders = true, "47", 10
	rep = check(t, cfg)
	if got := raised(); len(got) != 5 || len(rep.OrdersCreated) != 5 {
		t.Fatalf("with --max-orders 10: StoreLink raised %v, the report names %d orders; want all 5 write probes' orders named", got, len(rep.OrdersCreated))
	}
	findings := 0
	for _, p := range rep.Probes {
		for _, fd := range p.Findings {
			if fd.Kind == FindingOrderRaised {
				findings++
			}
		}
	}
	if findings != 4 || !rep.OrdersCreated[4].Intended {
		t.Errorf("%d order-raised findings, want 4 (one per negative write probe); last order %+v", findings, rep.OrdersCreated[4])
	}
}

func slicesContainsFunc[T any](s []T, f func(T) bool) bool {
	for _, v := range s {
		if f(v) {
			return true
		}
	}
	return false
}

// TestConformingWriteNamesItsOrder: the one order raised is named in every
// format.
func TestConformingWriteNamesItsOrder(t *testing.T) {
	t.Parallel()
	f := newFake()
	cfg := config(f, f.serve(t).URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	if len(rep.OrdersCreated) != 1 || rep.OrdersCreated[0].OrderID != "RO-47-000501" || !rep.OrdersCreated[0].Intended {
		t.Fatalf("orders created %+v, want the one intended order RO-47-000501", rep.OrdersCreated)
	}
	if out := rendered(t, rep); strings.Count(out, "RO-47-000501") < 3 {
		t.Errorf("the order is not named in every format:\n%s", out)
	}
	cfg.AllowWrites, cfg.WriteStore, cfg.MaxOrders = false, "", 0
	rep = check(t, cfg)
	if len(rep.OrdersCreated) != 0 || strings.Contains(rendered(t, rep), "Orders left") {
		t.Errorf("without writes: %+v", rep.OrdersCreated)
	}
}

// TestProbesUseLearnedIDs: without --order and --supplier, the probes read
// the SKU's supplier and the order the write raised.
func TestProbesUseLearnedIDs(t *testing.T) {
	t.Parallel()
	f := newFake()
	keyless := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/suppliers/") && r.Header.Get("X-Korral-Store-Key") == "" {
				r.Header.Set("X-Korral-Store-Key", f.keys["47"])
			}
			next.ServeHTTP(w, r)
		})
	}
	cfg := config(f, f.serve(t, keyless).URL)
	cfg.OrderID = ""
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	p := findProbe(t, rep, opGetSupplier, "no key")
	if p.Request != "GET /v1/suppliers/"+fakeSupplier || p.Got != 200 || p.Verdict != Drift {
		t.Errorf("supplier without a key: %s got %d %s, want the learned supplier read, 200, drift", p.Request, p.Got, p.Verdict)
	}
	for _, name := range []string{"no key", "another store's key"} {
		if p := findProbe(t, rep, opGetOrder, name); p.Request != "GET /v1/stores/47/replenishment/RO-47-000501" || p.Verdict != Pass {
			t.Errorf("order probe %s: %s %s %s, want the raised order RO-47-000501", name, p.Request, p.Verdict, p.Detail)
		}
	}
	if p := findProbe(t, rep, opGetOrder, "valid key"); p.Verdict != Skipped || !strings.Contains(p.Detail, "read back the raised order") {
		t.Errorf("order valid key: %s %q", p.Verdict, p.Detail)
	}
	for _, c := range rep.Coverage {
		if c.Status != Checked {
			t.Errorf("%s %s: %s", c.Operation, c.Status, c.Why)
		}
	}
	// With only the order read selected, the write that would give it an
	// id is not sent, and the skip says so.
	cfg.Operations = []string{opGetOrder}
	rep = check(t, cfg)
	if p := findProbe(t, rep, opGetOrder, "valid key"); p.Verdict != Skipped || !strings.Contains(p.Detail, "select createReplenishmentOrder too") {
		t.Errorf("order valid key, only getReplenishmentOrder selected: %s %q", p.Verdict, p.Detail)
	}
	cfg.Operations = nil
	// Without writes and --order the order read says what would give it
	// an id.
	cfg.AllowWrites, cfg.WriteStore = false, ""
	rep = check(t, cfg)
	if p := findProbe(t, rep, opGetOrder, "valid key"); p.Verdict != Skipped || !strings.Contains(p.Detail, "--order") || !strings.Contains(p.Detail, "--allow-writes") {
		t.Errorf("order valid key without writes: %s %q", p.Verdict, p.Detail)
	}
}

// TestLearnSKU: the SKU probes use the SKU StoreLink's answer names: the
// requested one when named, else the first named, at any depth; --sku
// overrides.
func TestLearnSKU(t *testing.T) {
	cases := map[string]struct {
		body, want string
	}{
		"echo":                         {`{"store_id":"47","sku":"8847291","on_hand_units":3}`, "8847291"},
		"another spelling":             {`{"store_id":"47","sku":"08847291","on_hand_units":3}`, "08847291"},
		"a list, requested among them": {`{"items":[{"sku":"1111"},{"sku":"8847291"}]}`, "8847291"},
		"a list without it":            {`{"items":[{"sku":"1111"},{"sku":"2222"}]}`, "1111"},
		"none":                         {`{"on_hand":3}`, ""},
		"not JSON":                     {`<html>`, ""},
	}
	for name, tc := range cases {
		st := &state{}
		learnSKU(st, "8847291", []byte(tc.body))
		if st.sku != tc.want {
			t.Errorf("%s: learned %q, want %q", name, st.sku, tc.want)
		}
	}
	sp := mustSpec(t)
	st := &state{sku: "08847291"}
	learned := Config{Keyring: map[string]string{"47": "k"}}.withDefaults(sp.exampleSKU)
	if r := skuRequest(st, learned, keyOwn, "47"); r.path != "/v1/skus/08847291" {
		t.Errorf("without --sku: %s, want the learned SKU", r.path)
	}
	given := Config{Keyring: map[string]string{"47": "k"}, SKU: "8847291"}.withDefaults(sp.exampleSKU)
	if r := skuRequest(st, given, keyOwn, "47"); r.path != "/v1/skus/8847291" {
		t.Errorf("with --sku: %s, want --sku", r.path)
	}
}

// TestUnansweredWriteCountsAsAnOrder: an unanswered write counts against
// the bound as an order of unknown outcome.
func TestUnansweredWriteCountsAsAnOrder(t *testing.T) {
	t.Parallel()
	f := newFake()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var posts atomic.Int64
	hang := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				posts.Add(1)
				// The body read, the server sees the client hang up.
				_, _ = io.Copy(io.Discard, r.Body)
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	cfg := config(f, f.serve(t, hang).URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	cfg.RequestTimeout = 200 * time.Millisecond
	rep := check(t, cfg)
	if len(rep.OrdersCreated) != 1 || rep.OrdersCreated[0].Status != 0 || rep.OrdersCreated[0].Probe != "no key" {
		t.Fatalf("orders %+v, want the no-key write with an unknown outcome", rep.OrdersCreated)
	}
	if p := findProbe(t, rep, opCreateOrder, "no key"); p.Verdict != Error || !strings.Contains(p.Detail, "outcome is unknown") {
		t.Errorf("no-key write: %s %q", p.Verdict, p.Detail)
	}
	if p := findProbe(t, rep, opCreateOrder, "raise one order"); p.Verdict != Skipped || !strings.Contains(p.Detail, "--max-orders") {
		t.Errorf("raise one order: %s %q, want held", p.Verdict, p.Detail)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("%d writes sent, want 1", n)
	}
}
