package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
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

// routes are the routes of the operations the adapter reads, by
// operation id; the chain's store list is not one of them.
var routes = map[string]string{
	rules.OpGetStore:     "/v1/stores/{store_id}",
	rules.OpGetInventory: "/v1/stores/{store_id}/inventory",
	rules.OpListPOS:      "/v1/stores/{store_id}/pos",
	rules.OpCreateOrder:  "/v1/stores/{store_id}/replenishment",
	rules.OpGetOrder:     "/v1/stores/{store_id}/replenishment/{order_id}",
	rules.OpGetSKU:       "/v1/skus/{sku}",
	rules.OpGetSupplier:  "/v1/suppliers/{supplier_id}",
}

// read makes the adapter's call that reads the operation for q.
func read(ctx context.Context, c *Client, op string, q rules.Query) error {
	var err error
	switch op {
	case rules.OpGetStore:
		_, err = c.Store(ctx, q.StoreID)
	case rules.OpGetInventory:
		_, err = c.Inventory(ctx, q.StoreID, q.SKU)
	case rules.OpListPOS:
		_, err = c.Sales(ctx, q.StoreID, q.SKU, q.Since, 1000)
	case rules.OpCreateOrder:
		_, err = c.CreateOrder(ctx, q.StoreID, domain.OrderRequest{SKU: q.Raised.SKU, QuantityUnits: q.Raised.QuantityUnits, Reason: q.Raised.Reason})
	case rules.OpGetOrder:
		_, err = c.Order(ctx, q.StoreID, q.OrderID)
	case rules.OpGetSKU:
		_, err = c.SKU(ctx, "47", q.SKU)
	case rules.OpGetSupplier:
		_, err = c.Supplier(ctx, "47", q.SupplierID)
	default:
		panic("no adapter call for " + op)
	}
	return err
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
// same the checker's judge is fed in openapi/contract,
// TestEveryRuleExampleIsAFindingOfTheJudge) to the adapter: a read fails
// with UPSTREAM_CONTRACT_ERROR, the write with WRITE_OUTCOME_UNKNOWN, each
// naming the rule's id and the field, in the answer and in the log line.
// Every rule of the registry is so enforced, and the adapter makes no
// semantic fault but through broken, from a rule's finding; so the causes
// of a semantic contract error and the checker's rule findings are the
// same set, under the same ids.
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
					// The adapter asks for its page size; the example's
					// page breaks the limit it answers.
					o.POSPageSize = cmp.Or(q.Limit, rules.DefaultPOSLimit)
				})
			ctx := callid.With(context.Background(), "call-"+ex.Rule)
			ae := apperr.From(read(ctx, c, ex.Operation, q))
			want := apperr.UpstreamContractError
			if ex.Operation == rules.OpCreateOrder {
				want = apperr.WriteOutcomeUnknown
			}
			if ae == nil || ae.Code != want {
				t.Fatalf("got %v, want %s", ae, want)
			}
			field := pointerPath(resources[route], ex.Field)
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
		if err := read(context.Background(), c, op, q); err != nil {
			t.Errorf("%s: %v", op, err)
		}
	}
}

// TestFutureIsJudgedByTheServersClock: the adapter's "not in the future"
// is the server's clock, so a StoreLink pinned to the same fixed time as
// the server (the demo) is taken, and one ahead of it is not.
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
	if _, err := wall.Inventory(context.Background(), "47", q.SKU); !strings.Contains(err.Error(), "rule inventory.counted_at") {
		t.Errorf("with the wall clock: %v, want inventory.counted_at", err)
	}
}
