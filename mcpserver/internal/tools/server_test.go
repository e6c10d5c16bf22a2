package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fakeUpstream is an in-memory StoreLink for handler tests. It counts calls
// per store, so scope tests can show nothing was asked for a foreign store.
type fakeUpstream struct {
	mu       sync.Mutex
	calls    map[string]int
	err      error // returned by every call when set
	stores   map[string]domain.Store
	inv      domain.Inventory
	invBy    map[string]domain.Inventory // a store's own stock, instead of inv
	sales    []domain.Sale
	sku      domain.SKU
	supplier domain.Supplier
	orders   map[string]domain.Order
	created  []domain.OrderRequest
	// truncate makes every sales walk report that it stopped at its bound.
	truncate bool
}

func (f *fakeUpstream) count(storeID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[storeID]++
	return f.err
}

func (f *fakeUpstream) callsFor(storeID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[storeID]
}

func (f *fakeUpstream) Store(_ context.Context, id string) (domain.Store, error) {
	if err := f.count(id); err != nil {
		return domain.Store{}, err
	}
	st, ok := f.stores[id]
	if !ok {
		return domain.Store{}, apperr.New(apperr.NotFound, "no store", "check")
	}
	return st, nil
}

func (f *fakeUpstream) Inventory(_ context.Context, id, _ string) (domain.Inventory, error) {
	if inv, ok := f.invBy[id]; ok {
		return inv, f.count(id)
	}
	return f.inv, f.count(id)
}

func (f *fakeUpstream) Sales(_ context.Context, id, _ string, since time.Time, max int) (domain.SalesPage, error) {
	if err := f.count(id); err != nil {
		return domain.SalesPage{}, err
	}
	var p domain.SalesPage
	for _, s := range f.sales {
		if s.At.Before(since) {
			continue
		}
		p.Total++
		if len(p.Items) < max {
			p.Items = append(p.Items, s)
		} else {
			p.Truncated = true
		}
	}
	p.Truncated = p.Truncated || f.truncate
	return p, nil
}

func (f *fakeUpstream) SKU(_ context.Context, id, _ string) (domain.SKU, error) {
	return f.sku, f.count(id)
}

func (f *fakeUpstream) Supplier(_ context.Context, id, _ string) (domain.Supplier, error) {
	return f.supplier, f.count(id)
}

func (f *fakeUpstream) Order(_ context.Context, id, orderID string) (domain.Order, error) {
	if err := f.count(id); err != nil {
		return domain.Order{}, err
	}
	o, ok := f.orders[orderID]
	if !ok || o.StoreID != id {
		return domain.Order{}, apperr.New(apperr.NotFound, "no order", "check the id")
	}
	return o, nil
}

func (f *fakeUpstream) CreateOrder(_ context.Context, id string, req domain.OrderRequest) (domain.Order, error) {
	if err := f.count(id); err != nil {
		return domain.Order{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, req)
	return domain.Order{ID: fmt.Sprintf("RO-%s-%06d", id, len(f.created)), StoreID: id, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Status: "submitted"}, nil
}

var testNow = time.Date(2026, 11, 27, 14, 30, 0, 0, time.FixedZone("CET", 3600))

func pragueStore(id, name string) domain.Store {
	st := domain.Store{ID: id, Name: name, Timezone: "Europe/Prague"}
	for wd := range st.Hours {
		st.Hours[wd] = domain.DayHours{Opens: 7 * 60, Closes: 22 * 60}
	}
	st.Hours[time.Sunday] = domain.DayHours{Closed: true}
	return st
}

func newFake() *fakeUpstream {
	f := &fakeUpstream{
		stores:   map[string]domain.Store{"47": pragueStore("47", "Praha Smíchov"), "102": pragueStore("102", "Brno Královo Pole")},
		inv:      domain.Inventory{OnHand: 5, CountedAt: testNow.Add(-2 * time.Hour)},
		sku:      domain.SKU{Code: "8847291", Name: "Madeta butter 250g", Category: "dairy", SupplierID: "SUP-MADETA", CasePack: 12, Chilled: true, ShelfLifeDays: 30},
		supplier: domain.Supplier{ID: "SUP-MADETA", Name: "Madeta a.s.", LeadTimeDays: 2},
		orders: map[string]domain.Order{"RO-47-000001": {ID: "RO-47-000001", StoreID: "47", SKU: "8847291", QuantityUnits: 24,
			Status: "shipped", SubmittedAt: testNow.Add(-30 * time.Hour), ExpectedArrival: testNow.Add(18 * time.Hour)}},
	}
	// Two units an hour through each trading day of the last three weeks.
	for d := 1; d <= 21; d++ {
		day := testNow.AddDate(0, 0, -d)
		if day.Weekday() == time.Sunday {
			continue
		}
		for h := 8; h < 22; h++ {
			at := time.Date(day.Year(), day.Month(), day.Day(), h, 15, 0, 0, testNow.Location())
			f.sales = append(f.sales, domain.Sale{TransactionID: fmt.Sprintf("T-%d-%d", d, h), At: at, Units: 2})
		}
	}
	// StoreLink answers newest first.
	sort.Slice(f.sales, func(i, j int) bool { return f.sales[i].At.After(f.sales[j].At) })
	return f
}

func mustKeyring(t *testing.T, js string) *keyring.Keyring {
	t.Helper()
	kr, err := keyring.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

type session struct {
	cs   *mcp.ClientSession
	logs *bytes.Buffer
	mu   *sync.Mutex
}

func (s session) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func connect(t *testing.T, up Upstream, kr *keyring.Keyring, mutate func(*Options)) session {
	t.Helper()
	return connectAs(t, up, kr, mutate, nil)
}

// connectAs is connect with the client's options.
func connectAs(t *testing.T, up Upstream, kr *keyring.Keyring, mutate func(*Options), clientOpts *mcp.ClientOptions) session {
	t.Helper()
	logs, mu := &bytes.Buffer{}, &sync.Mutex{}
	opts := Options{
		Upstream: up,
		Keyring:  func() *keyring.Keyring { return kr },
		Logger:   slog.New(slog.NewJSONHandler(lockedWriter{mu, logs}, nil)),
		Now:      func() time.Time { return testNow },
	}
	if mutate != nil {
		mutate(&opts)
	}
	srv := New(opts)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, clientOpts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return session{cs: cs, logs: logs, mu: mu}
}

// callTool calls a tool and decodes its envelope.
func callTool(t *testing.T, s session, name string, args any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var env map[string]any
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("%s: text is not the JSON envelope: %v: %s", name, err, text)
	}
	if ok, _ := env["ok"].(bool); ok == res.IsError {
		t.Fatalf("%s: ok=%v but isError=%v", name, ok, res.IsError)
	}
	if res.IsError {
		// A tool error's envelope is text only (ADR 0012).
		if res.StructuredContent != nil {
			t.Fatalf("%s: a tool error carries structured content", name)
		}
		return env, res
	}
	var structured map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &structured)
	if diff := cmp.Diff(env, structured); diff != "" {
		t.Fatalf("%s: text and structured content differ: %s", name, diff)
	}
	// Every answer must pass the output schema a host checks it with.
	validateOutput(t, s, name, structured)
	return env, res
}

// validateOutput checks an answer against the tool's output schema from a
// real tools/list.
func validateOutput(t *testing.T, s session, name string, answer map[string]any) {
	t.Helper()
	tools, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != name {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var schema jsonschema.Schema
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: output schema: %v", name, err)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: resolve output schema: %v", name, err)
		}
		if err := resolved.Validate(answer); err != nil {
			t.Fatalf("%s: answer does not match the output schema: %v\n%v", name, err, answer)
		}
		return
	}
	t.Fatalf("%s: not in tools/list", name)
}

func errCode(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestScopeRules(t *testing.T) {
	cases := []struct {
		name    string
		keyring string
		args    map[string]any
		code    string
	}{
		{"several stores, store_id missing", `{"47":"a","102":"b"}`, map[string]any{"sku": "8847291"}, "STORE_ID_REQUIRED"},
		{"store outside the keyring", `{"47":"a","102":"b"}`, map[string]any{"sku": "8847291", "store_id": "55"}, "STORE_NOT_AUTHORIZED"},
		{"one store, outside", `{"47":"a"}`, map[string]any{"sku": "8847291", "store_id": "55"}, "STORE_NOT_AUTHORIZED"},
		{"one store, default", `{"47":"a"}`, map[string]any{"sku": "8847291"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			s := connect(t, f, mustKeyring(t, tc.keyring), nil)
			for _, tool := range []string{"korral_check_stock_risk", "korral_list_recent_sales"} {
				env, _ := callTool(t, s, tool, tc.args)
				if got := errCode(env); got != tc.code {
					t.Errorf("%s: code %q, want %q (%v)", tool, got, tc.code, env)
				}
			}
			if f.callsFor("55") != 0 {
				t.Fatal("a request for store 55 reached the upstream")
			}
			if tc.code != "" && (f.callsFor("47") != 0 || f.callsFor("102") != 0) {
				t.Fatal("a rejected call still reached the upstream")
			}
		})
	}
}

func TestBadArgumentsAreRejectedNotRepaired(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"korral_check_stock_risk", map[string]any{"sku": "8847291", "store": "47"}, "unknown argument(s): store"},
		{"korral_check_stock_risk", map[string]any{"sku": "8847291", "lookback_days": 40}, "lookback_days"},
		{"korral_check_stock_risk", map[string]any{"sku": "8847291", "lookback_days": 0}, "lookback_days"},
		{"korral_check_stock_risk", map[string]any{"sku": "8847291", "lookback_days": "14"}, "lookback_days"},
		{"korral_check_stock_risk", map[string]any{"sku": "butter"}, "sku"},
		{"korral_check_stock_risk", map[string]any{}, "sku"},
		{"korral_list_recent_sales", map[string]any{"sku": "8847291", "limit": 501}, "limit"},
		{"korral_list_recent_sales", map[string]any{"sku": "8847291", "since": "yesterday"}, "since"},
		{"korral_list_recent_sales", map[string]any{"sku": "8847291", "since": "2026-11-01T00:00:00+01:00"}, "7 days"},
		{"korral_get_order_status", map[string]any{"order_id": "../../etc"}, "order_id"},
		{"korral_list_authorized_stores", map[string]any{"verbose": true}, "unknown argument(s): verbose"},
	}
	for _, tc := range cases {
		env, _ := callTool(t, s, tc.tool, tc.args)
		if errCode(env) != "INVALID_ARGUMENT" {
			t.Errorf("%s %v: got %v", tc.tool, tc.args, env)
			continue
		}
		e := env["error"].(map[string]any)
		if !strings.Contains(e["message"].(string), tc.want) || e["remediation"] == "" {
			t.Errorf("%s %v: message %q should mention %q and have a remediation", tc.tool, tc.args, e["message"], tc.want)
		}
	}
	if f.callsFor("47") != 0 {
		t.Fatalf("invalid calls reached the upstream %d times", f.callsFor("47"))
	}
}

func TestInternalErrorsHideTheirCause(t *testing.T) {
	f := newFake()
	f.err = errors.New("dial tcp 10.1.2.3:5432: secret-internal-detail")
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	if errCode(env) != "INTERNAL_ERROR" {
		t.Fatalf("got %v", env)
	}
	e := env["error"].(map[string]any)
	id, _ := e["incident_id"].(string)
	if id == "" || strings.Contains(fmt.Sprint(env), "secret-internal-detail") {
		t.Fatalf("internal error must carry an incident id and hide the cause: %v", env)
	}
	logs := s.logText()
	if !strings.Contains(logs, "secret-internal-detail") || !strings.Contains(logs, id) {
		t.Fatal("the cause and incident id must reach the log")
	}
}

// sharedLedger is a fresh SQLite state database shared by the server and
// the test, closed when the test ends.
func sharedLedger(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func errText(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	return fmt.Sprint(e["message"], " | ", e["remediation"])
}

// putEntry records an entry of store for SKU 8847291 and moves it into st
// (raised as orderID). Each key needs its own quantity.
func putEntry(t *testing.T, db *sqlite.DB, key, store string, qty int64, st state.EntryState, upstream, orderID string) state.Entry {
	t.Helper()
	ctx := context.Background()
	now := testNow.Add(-time.Hour)
	e := state.Entry{IdempotencyKey: key, StoreID: store, SKU: "8847291", QuantityUnits: qty, Reason: "test " + key,
		RequestHash: state.RequestHash(store, "8847291", qty, "test "+key), State: state.StateSending,
		UpstreamID: upstream, CreatedAt: now, UpdatedAt: now}
	staged := st == state.StatePendingApproval || st == state.StateRejected || st == state.StateExpired
	if staged {
		e.State, e.ApprovalID, e.ApprovalExpiresAt = state.StatePendingApproval, "apr-"+key, testNow.Add(time.Hour)
		if st == state.StateExpired {
			e.ApprovalExpiresAt = testNow.Add(-time.Minute)
		}
	}
	if _, created, err := db.Reserve(ctx, e); err != nil || !created {
		t.Fatalf("reserve %s: %v (created %v)", key, err, created)
	}
	var err error
	switch st {
	case state.StateRaised:
		_, err = db.Finish(ctx, key, st, orderID, "", "", now)
	case state.StateFailed, state.StateRetryable, state.StateUnknown:
		_, err = db.Finish(ctx, key, st, "", string(apperr.UpstreamRejected), "refused", now)
	case state.StateRejected:
		_, err = db.Reject(ctx, e.ApprovalID, "Jana", now)
	}
	if err != nil {
		t.Fatalf("%s to %s: %v", key, st, err)
	}
	got, _, _ := db.Get(ctx, key)
	return got
}
