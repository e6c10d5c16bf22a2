package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	salesDefaultLimit = 100
	salesMaxLimit     = 500
	salesMaxLookback  = 7 * 24 * time.Hour
	// salesSumCap bounds how many transactions are read to total the units of
	// the window; beyond it the total is marked incomplete.
	salesSumCap = 20000
)

type listSalesIn struct {
	SKU     string `json:"sku" jsonschema:"SKU code"`
	StoreID string `json:"store_id,omitempty" jsonschema:"optional if one store is authorized"`
	Since   string `json:"since,omitempty" jsonschema:"window start, RFC 3339; default 24h ago, max 7 days back"`
	Limit   int    `json:"limit,omitempty" jsonschema:"max transactions returned"`
}

// saleColumns name the cells of every sales row: when the sale was scanned
// (store-local RFC 3339), its units and StoreLink's transaction id.
var saleColumns = []string{"timestamp", "units", "transaction_id"}

type listSalesOut struct {
	StoreID             string   `json:"store_id"`
	SKU                 string   `json:"sku"`
	WindowStart         string   `json:"window_start"`
	WindowEnd           string   `json:"window_end"`
	Items               table    `json:"items"`
	CountReturned       int      `json:"count_returned"`
	CountTotalAvailable int64    `json:"count_total_available"`
	Truncated           bool     `json:"truncated"`
	UnitsSoldInWindow   int64    `json:"units_sold_in_window"`
	UnitsTotalComplete  bool     `json:"units_total_complete"`
	Unknown             []string `json:"unknown,omitempty"`
}

func addListRecentSales(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[listSalesIn, listSalesOut]{
		tool: &mcp.Tool{
			Name:  "korral_list_recent_sales",
			Title: "List recent sales",
			Description: "A SKU's individual sales at a store, newest first, with the window's total units. " +
				"Use it to see sales shape (one bulk order or many baskets) or to check a projection.",
			Annotations: readAnnotations(),
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeSKU(p)
			shapeStoreID(p)
			p["since"].Format = "date-time"
			p["limit"].Minimum = ptr(1.0)
			p["limit"].Maximum = ptr(float64(salesMaxLimit))
			p["limit"].Default = []byte(fmt.Sprint(salesDefaultLimit))
		},
		handle: s.listRecentSales,
	})
}

func (s *server) listRecentSales(ctx context.Context, c *call, in listSalesIn) (*listSalesOut, error) {
	c.sku = in.SKU
	now := s.opts.Now()
	since := now.Add(-24 * time.Hour)
	if in.Since != "" {
		t, err := time.Parse(time.RFC3339, in.Since)
		if err != nil {
			return nil, apperr.New(apperr.InvalidArgument, fmt.Sprintf("since %q is not an RFC 3339 time", in.Since), "Pass a time like 2026-11-27T08:00:00+01:00, or omit since for the last 24 hours.")
		}
		if t.After(now) {
			return nil, apperr.New(apperr.InvalidArgument, "since is in the future", "Pass a time in the past, at most 7 days back.")
		}
		if now.Sub(t) > salesMaxLookback {
			return nil, apperr.New(apperr.InvalidArgument, "since is more than 7 days back", "Narrow the window to at most 7 days; for longer trends use korral_check_stock_risk's per-day evidence.")
		}
		since = t
	}
	if in.Limit == 0 {
		in.Limit = salesDefaultLimit
	}
	storeID, err := s.resolveStore(c, in.StoreID)
	if err != nil {
		return nil, err
	}
	loc := time.UTC
	page, err := s.opts.Upstream.Sales(ctx, storeID, in.SKU, since, salesSumCap)
	if err != nil {
		return nil, err
	}
	if len(page.Items) > 0 {
		loc = page.Items[0].At.Location()
	}
	out := &listSalesOut{
		StoreID: storeID, SKU: in.SKU,
		WindowStart: since.In(loc).Format(time.RFC3339), WindowEnd: now.In(loc).Format(time.RFC3339),
		Items:               table{Columns: saleColumns, Rows: [][]any{}},
		CountTotalAvailable: page.Total,
		UnitsTotalComplete:  !page.Truncated && int64(len(page.Items)) == page.Total,
		Unknown:             page.Unknown.Caveats(),
	}
	if page.Total < 0 {
		// StoreLink gave no readable total (ADR 0030): the lines read are
		// every line there is only when the walk read them all.
		out.CountTotalAvailable = int64(len(page.Items))
		out.UnitsTotalComplete = !page.Truncated
	}
	for i, sale := range page.Items {
		out.UnitsSoldInWindow += sale.Units
		if i < in.Limit {
			out.Items.Rows = append(out.Items.Rows, []any{sale.At.Format(time.RFC3339), sale.Units, sale.TransactionID})
		}
	}
	out.CountReturned = len(out.Items.Rows)
	out.Truncated = int64(out.CountReturned) < out.CountTotalAvailable || page.Truncated
	c.summary = fmt.Sprintf("Listed %d of %d sale(s) of SKU %s at store %s since %s (%d units).",
		out.CountReturned, out.CountTotalAvailable, in.SKU, storeID, out.WindowStart, out.UnitsSoldInWindow)
	return out, nil
}
