package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/storelinkclient/rules"
)

// routes are the routes the adapter reads, by operation id.
var routes = map[string]string{
	rules.OpGetStore:     "/v1/stores/{store_id}",
	rules.OpGetInventory: "/v1/stores/{store_id}/inventory",
	rules.OpListPOS:      "/v1/stores/{store_id}/pos",
	rules.OpCreateOrder:  "/v1/stores/{store_id}/replenishment",
	rules.OpGetOrder:     "/v1/stores/{store_id}/replenishment/{order_id}",
	rules.OpGetSKU:       "/v1/skus/{sku}",
	rules.OpGetSupplier:  "/v1/suppliers/{supplier_id}",
}

// read makes the adapter's call for q's operation and returns the
// qualifiers left unknown.
func read(ctx context.Context, c *Client, op string, q rules.Query) (domain.Unknown, error) {
	switch op {
	case rules.OpGetStore:
		v, err := c.Store(ctx, q.StoreID)
		return v.Unknown, err
	case rules.OpGetInventory:
		v, err := c.Inventory(ctx, q.StoreID, q.SKU)
		return v.Unknown, err
	case rules.OpListPOS:
		v, err := c.Sales(ctx, q.StoreID, q.SKU, q.Since, 1000)
		return v.Unknown, err
	case rules.OpCreateOrder:
		v, err := c.CreateOrder(ctx, q.StoreID, domain.OrderRequest{SKU: q.Raised.SKU, QuantityUnits: q.Raised.QuantityUnits, Reason: q.Raised.Reason})
		return v.Unknown, err
	case rules.OpGetOrder:
		v, err := c.Order(ctx, q.StoreID, q.OrderID)
		return v.Unknown, err
	case rules.OpGetSKU:
		v, err := c.SKU(ctx, "47", q.SKU)
		return v.Unknown, err
	case rules.OpGetSupplier:
		v, err := c.Supplier(ctx, "47", q.SupplierID)
		return v.Unknown, err
	}
	panic("no adapter call for " + op)
}

// serving answers every request with body, as StoreLink answers op.
func serving(t *testing.T, op string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if op == rules.OpCreateOrder {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEveryRuleIsAContractError feeds each rule's violating example (the
// same the checker gets in openapi/contract) to the adapter. A broken
// decision field fails a read with UPSTREAM_CONTRACT_ERROR and the write
// with WRITE_OUTCOME_UNKNOWN, naming rule id and field; a broken qualifier
// is taken as unknown with a warn line (ADR 0030). So semantic contract
// errors and the checker's findings share one set of ids.
func TestEveryRuleIsAContractError(t *testing.T) {
	enforced := map[string]bool{}
	for _, ex := range rules.Examples() {
		route, reads := routes[ex.Operation]
		if !reads {
			continue
		}
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			q := ex.Query
			c, logs := newClient(t, serving(t, ex.Operation, ex.Bad()).URL, &fakeKeys{current: map[string]string{"47": "k47"}},
				func(o *Options) {
					o.Now = func() time.Time { return q.Now }
					// The example's page breaks the limit the adapter asks for.
					o.POSPageSize = cmp.Or(q.Limit, rules.DefaultPOSLimit)
				})
			ctx := callid.With(context.Background(), "call-"+ex.Rule)
			field := pointerPath(resources[route], ex.Field)
			unknown, err := read(ctx, c, ex.Operation, q)
			if src, ok := domain.IsQualifier(field); ok {
				if err != nil || !unknown.Has(src.Name) {
					t.Fatalf("got %v with unknown %v, want the answer with %s unknown", err, unknown, src.Name)
				}
				if !slices.ContainsFunc(logLines(t, logs), func(l map[string]any) bool {
					return l["msg"] == "upstream.qualifier_unreadable" && l["call_id"] == "call-"+ex.Rule &&
						strings.Contains(fmt.Sprint(l["fields"]), field+" ("+ex.Rule+")")
				}) {
					t.Errorf("no qualifier_unreadable line naming %s (%s):\n%s", field, ex.Rule, logs)
				}
				enforced[ex.Rule] = true
				return
			}
			ae := apperr.From(err)
			want := apperr.UpstreamContractError
			if ex.Operation == rules.OpCreateOrder {
				want = apperr.WriteOutcomeUnknown
			}
			if ae == nil || ae.Code != want {
				t.Fatalf("got %v, want %s", ae, want)
			}
			var f *fault
			if !errors.As(ae.Cause, &f) || f.id != ex.Rule || f.field != field {
				t.Fatalf("cause %v, want the fault of %s at %s", ae.Cause, ex.Rule, field)
			}
			if !strings.Contains(ae.Message, field+": ") || !strings.Contains(ae.Message, "(rule "+ex.Rule+")") {
				t.Errorf("message %q does not name %s and rule %s", ae.Message, field, ex.Rule)
			}
			if !hasLine(logLines(t, logs), map[string]any{"msg": "upstream.contract_error", "call_id": "call-" + ex.Rule,
				"field": field, "rule_id": ex.Rule, "error_code": string(want)}) {
				t.Errorf("no contract_error line naming the rule:\n%s", logs)
			}
			enforced[ex.Rule] = true
		})
	}
	for _, r := range rules.Rules() {
		if !slices.ContainsFunc(r.Operations, func(op string) bool { _, reads := routes[op]; return reads }) {
			continue // a rule of the store list only, which the adapter never reads
		}
		if !enforced[r.ID] {
			t.Errorf("rule %s: no example makes it a contract error of the adapter", r.ID)
		}
	}
}

// TestGoodAnswersPassTheAdapter: the rules' passing fixtures are taken.
func TestGoodAnswersPassTheAdapter(t *testing.T) {
	for op := range routes {
		q := rules.ExampleQuery(op)
		body, err := json.Marshal(rules.Good(op, q))
		if err != nil {
			t.Fatal(err)
		}
		c, _ := newClient(t, serving(t, op, body).URL, &fakeKeys{current: map[string]string{"47": "k47"}},
			func(o *Options) { o.Now = func() time.Time { return q.Now } })
		if unknown, err := read(context.Background(), c, op, q); err != nil || len(unknown) > 0 {
			t.Errorf("%s: %v, unknown %v", op, err, unknown)
		}
	}
}

// TestFutureIsJudgedByTheServersClock: "not in the future" uses the server's
// clock, so a StoreLink pinned to the same time (the demo) is taken, and
// one ahead has its count time unknown (ADR 0030).
func TestFutureIsJudgedByTheServersClock(t *testing.T) {
	ahead := time.Now().Add(30 * 24 * time.Hour)
	q := rules.ExampleQuery(rules.OpGetInventory)
	q.Now = ahead
	body, _ := json.Marshal(rules.Good(rules.OpGetInventory, q)) // counted 8 hours before ahead
	srv := serving(t, rules.OpGetInventory, body)
	pinned, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k47"}}, func(o *Options) { o.Now = func() time.Time { return ahead } })
	if _, err := pinned.Inventory(context.Background(), "47", q.SKU); err != nil {
		t.Errorf("with the server's clock pinned alike: %v", err)
	}
	wall, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k47"}}, nil)
	inv, err := wall.Inventory(context.Background(), "47", q.SKU)
	if err != nil || !inv.Unknown.Has("inventory.counted_at") || !inv.CountedAt.IsZero() {
		t.Errorf("with the wall clock: %+v, %v; want the count with inventory.counted_at unknown", inv, err)
	}
}
