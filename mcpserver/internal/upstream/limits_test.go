package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

// TestEveryLimitHasAField: each limit the contract states names a field of
// the generated type its operation answers with, so no limit is skipped.
func TestEveryLimitHasAField(t *testing.T) {
	types := map[string]reflect.Type{
		"SKU": reflect.TypeFor[*sl.SKU](), "StoreList": reflect.TypeFor[*sl.StoreList](), "Store": reflect.TypeFor[*sl.Store](),
		"Inventory": reflect.TypeFor[*sl.Inventory](), "POSPage": reflect.TypeFor[*sl.POSPage](),
		"Order": reflect.TypeFor[*sl.Order](), "Supplier": reflect.TypeFor[*sl.Supplier](),
	}
	if len(contractLimits) != 8 {
		t.Fatalf("limits for %d operations, want the contract's 8", len(contractLimits))
	}
	for _, o := range contractLimits {
		typ, ok := types[o.schema]
		if !ok {
			t.Fatalf("%s %s answers with %s, which this test does not know", o.method, o.route, o.schema)
		}
		var count func(n *node) int
		count = func(n *node) int {
			c := 0
			if n.lim != nil {
				c++
			}
			for _, k := range n.kids {
				c += count(k)
			}
			if n.elem != nil {
				c += count(n.elem)
			}
			return c
		}
		if got := count(compile(typ, o.limits)); got != len(o.limits) {
			t.Errorf("%s %s: %d of %d limits name a field of %s", o.method, o.route, got, len(o.limits), typ)
		}
	}
}

// long is n characters of filler, two bytes each when wide.
func long(n int, wide bool) string {
	if wide {
		return strings.Repeat("é", n)
	}
	return strings.Repeat("x", n)
}

func skuBody(name, supplierID string) string {
	return fmt.Sprintf(`{"sku":"8847291","name":%q,"category":"dairy","supplier_id":%q,"unit":"piece","case_pack":12,"chilled":true}`, name, supplierID)
}

func posBody(since time.Time, ids []string, cursor string) string {
	var tx []string
	at := since.Add(time.Duration(len(ids)) * time.Second)
	for i, id := range ids {
		tx = append(tx, fmt.Sprintf(`{"transaction_id":%q,"timestamp":%q,"units":1}`, id, at.Add(-time.Duration(i)*time.Second).Format(time.RFC3339)))
	}
	next := ""
	if cursor != "" {
		next = fmt.Sprintf(`,"next_cursor":%q`, cursor)
	}
	return fmt.Sprintf(`{"store_id":"47","sku":"8847291","since":%q,"transactions":[%s],"total_count":%d%s}`,
		since.Format(time.RFC3339), strings.Join(tx, ","), len(ids)+1, next)
}

// TestLimitsAtTheBoundary: a value at the contract's limit is taken, one
// past it is refused (a decision field) or unknown and left empty (a
// qualifier), named with field and rule and never repeated.
func TestLimitsAtTheBoundary(t *testing.T) {
	since := time.Now().Add(-time.Hour).Truncate(time.Second)
	ids := func(n int, id string) []string { return slicesRepeat(id, n) }
	cases := []struct {
		name  string
		body  func(over bool) string
		call  func(c *Client, ctx context.Context) (any, error)
		cause string // the refusal's cause, or the qualifier made unknown
	}{
		{"sku.supplier_id", func(over bool) string { return skuBody("Butter", long(32+b2i(over), false)) },
			func(c *Client, ctx context.Context) (any, error) { return c.SKU(ctx, "47", "8847291") },
			"sku.supplier_id: 33 characters, the contract's pattern allows 32 (rule schema.max_length)"},
		{"sku.name", func(over bool) string { return skuBody(long(200+b2i(over), true), "SUP-1") },
			func(c *Client, ctx context.Context) (any, error) { return c.SKU(ctx, "47", "8847291") }, "sku.name"},
		{"sku.name empty", func(over bool) string { return skuBody(long(1-b2i(over), false), "SUP-1") },
			func(c *Client, ctx context.Context) (any, error) { return c.SKU(ctx, "47", "8847291") }, "sku.name"},
		{"supplier.name", func(over bool) string {
			return fmt.Sprintf(`{"supplier_id":"SUP-1","name":%q,"lead_time_days":2}`, long(200+b2i(over), false))
		}, func(c *Client, ctx context.Context) (any, error) { return c.Supplier(ctx, "47", "SUP-1") }, "supplier.name"},
		{"pos.transactions.transaction_id", func(over bool) string { return posBody(since, []string{"T-1", long(64+b2i(over), false)}, "") },
			func(c *Client, ctx context.Context) (any, error) { return c.Sales(ctx, "47", "8847291", since, 5000) },
			"pos.transactions.1.transaction_id: 65 characters, the contract allows 64 (rule schema.max_length)"},
		{"pos.transactions", func(over bool) string { return posBody(since, ids(1000+b2i(over), "T-1"), "") },
			func(c *Client, ctx context.Context) (any, error) { return c.Sales(ctx, "47", "8847291", since, 5000) },
			"pos.transactions: 1001 items, the contract allows 1000 (rule schema.max_items)"},
		{"pos.next_cursor", func(over bool) string { return posBody(since, []string{"T-1"}, long(256+b2i(over), false)) },
			func(c *Client, ctx context.Context) (any, error) { return c.Sales(ctx, "47", "8847291", since, 1) },
			"pos.next_cursor: 257 characters, the contract allows 256 (rule schema.max_length)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, over := range []bool{false, true} {
				// One page: the double answers every page alike.
				c, logs := newClient(t, answering(t, 200, nil, tc.body(over)), keys47(), func(o *Options) { o.MaxPOSPages = 1 })
				ctx := callid.With(context.Background(), "call-limits")
				v, err := tc.call(c, ctx)
				qualifier := !strings.Contains(tc.cause, ":")
				switch {
				case !over && err != nil:
					t.Fatalf("at the limit: %v", err)
				case !over && unknownOf(v).Has(tc.cause):
					t.Fatalf("at the limit, %s is unknown", tc.cause)
				case over && qualifier && (err != nil || !unknownOf(v).Has(tc.cause)):
					t.Fatalf("past the limit: %v, unknown %v; want %s unknown", err, unknownOf(v), tc.cause)
				case over && !qualifier && (apperr.From(err) == nil || apperr.From(err).Code != apperr.UpstreamContractError || !strings.Contains(apperr.From(err).Message, tc.cause)):
					t.Fatalf("past the limit: %v; want a contract error naming %q", err, tc.cause)
				}
				if b, _ := json.Marshal(v); over && (strings.Contains(string(b)+logs.String(), "xxxxxxxxxxxxxxxxx") || strings.Contains(string(b)+logs.String(), "éééééééééééé")) {
					t.Fatalf("the value past its limit reached the answer or the log:\n%.300s\n%.2000s", b, logs)
				}
				if over && qualifier && !strings.Contains(logs.String(), `"msg":"upstream.qualifier_unreadable"`) {
					t.Fatalf("no qualifier_unreadable line naming %s:\n%s", tc.cause, logs)
				}
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", s, i)
	}
	return out
}

// unknownOf is the Unknown list of a domain value.
func unknownOf(v any) domain.Unknown {
	switch x := v.(type) {
	case domain.SKU:
		return x.Unknown
	case domain.Supplier:
		return x.Unknown
	case domain.Store:
		return x.Unknown
	case domain.SalesPage:
		return x.Unknown
	case domain.Order:
		return x.Unknown
	}
	return nil
}

// BenchmarkLimitsOfAFullPOSPage is the cost of the limits on the largest
// answer, a page of 1000 sales, beside the decoding it follows
// (docs/benchmarks.md).
func BenchmarkLimitsOfAFullPOSPage(b *testing.B) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	body := []byte(posBody(since, slicesRepeat("T-47-20261128", 1000), "c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw"))
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", Keys: keys47()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var v sl.POSPage
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	var v sl.POSPage
	if err := json.Unmarshal(body, &v); err != nil {
		b.Fatal(err)
	}
	b.Run("limits", func(b *testing.B) {
		for b.Loop() {
			var unknown domain.Unknown
			if err := c.overLimits(ctx, "GET", "/v1/stores/{store_id}/pos", "47", &v, &unknown); err != nil {
				b.Fatal(err)
			}
		}
	})
}
