package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The buyer's recurring questions as prompts (slash commands in hosts). A
// prompt only words a request: numbers come from the tools and nothing is
// sent without the buyer. Prompts count toward ToolBudgetBytes.

// Prompt names, in the tools' korral_ convention.
const (
	promptRestockGaps = "korral_restock_gaps"
	promptOrdersSince = "korral_orders_since"
)

// Bounds of the prompts' arguments.
const (
	// maxGapUnits bounds min_gap_units: an order is capped far below it.
	maxGapUnits = 100000
	// ordersSinceMaxDays bounds how far back korral_orders_since looks.
	ordersSinceMaxDays = 31
	// ordersListed is the most ledger entries one message names.
	ordersListed = 20
	// completionValues is the protocol's ceiling of values per completion.
	completionValues = 100
)

var (
	skuRE     = regexp.MustCompile(skuPattern)
	storeIDRE = regexp.MustCompile(storeIDPattern)
)

// addPrompts registers the prompts this deployment supports; the orders
// prompt needs the ledger, which read-only deployments lack.
func addPrompts(ms *mcp.Server, s *server) {
	ms.AddPrompt(&mcp.Prompt{
		Name:        promptRestockGaps,
		Title:       "Restock gaps",
		Description: "Check a SKU's stock risk at stores; preview orders where the gap (sold in 24 h minus on hand) exceeds N.",
		Arguments: []*mcp.PromptArgument{
			{Name: "sku", Description: "SKU code", Required: true},
			{Name: "min_gap_units", Description: "a gap above this warrants an order", Required: true},
			{Name: "store_ids", Description: "comma-separated; default all (a chain sweep)"},
		},
	}, s.restockGaps)
	if s.opts.Writes != nil && s.opts.Writes.Ledger != nil {
		ms.AddPrompt(&mcp.Prompt{
			Name:        promptOrdersSince,
			Title:       "Orders since",
			Description: "What this server ordered for a SKU at a store since a date, and did it ship.",
			Arguments: []*mcp.PromptArgument{
				{Name: "sku", Description: "SKU code", Required: true},
				{Name: "store_id", Description: "optional if one store is authorized"},
				{Name: "since", Description: "YYYY-MM-DD or RFC 3339; default 24 h ago"},
			},
		}, s.ordersSince)
	}
}

// promptError is the invalid-params error of a prompt's arguments, with
// the taxonomy's code and remediation in message and data.
func promptError(e *apperr.Error) error {
	data, _ := json.Marshal(map[string]string{"code": string(e.Code), "message": e.Message, "remediation": e.Remediation})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: e.Error() + ". " + e.Remediation, Data: data}
}

func invalidArg(message, remediation string) error {
	return promptError(apperr.New(apperr.InvalidArgument, message, remediation))
}

// promptSKU reads the required sku argument.
func promptSKU(args map[string]string) (string, error) {
	sku := strings.TrimSpace(args["sku"])
	if !skuRE.MatchString(sku) {
		return "", invalidArg("sku must be 4 to 14 digits, like \"4006381\"", "Pass the SKU code as digits only.")
	}
	return sku, nil
}

func (s *server) restockGaps(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	sku, err := promptSKU(args)
	if err != nil {
		return nil, err
	}
	gap, err := strconv.Atoi(strings.TrimSpace(args["min_gap_units"]))
	if err != nil || gap < 0 || gap > maxGapUnits {
		return nil, invalidArg(fmt.Sprintf("min_gap_units must be a whole number from 0 to %d", maxGapUnits), "Pass the gap in units, like \"12\".")
	}
	kr := s.storesFor(req.Extra)
	if kr == nil {
		return nil, promptError(apperr.New(apperr.InternalError, "no keyring loaded", ""))
	}
	var ids []string
	all := false
	for _, id := range strings.Split(args["store_ids"], ",") {
		if id = strings.TrimSpace(id); id == sweepAll {
			all = true
		} else if id != "" && !slices.Contains(ids, id) {
			if _, err := kr.Resolve(id); err != nil {
				if e, ok := err.(*apperr.Error); ok {
					return nil, promptError(e)
				}
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	if all && len(ids) > 0 {
		return nil, invalidArg(`store_ids "all" was given with other stores`, `Pass "all" alone, leave store_ids out for every store, or name up to 20 stores.`)
	}
	if len(ids) > maxRiskStores {
		return nil, invalidArg(fmt.Sprintf("at most %d named stores per check; this asks for %d", maxRiskStores, len(ids)),
			"Name up to 20 stores in store_ids, or leave it out to sweep every store.")
	}
	order := "preview korral_raise_replenishment_order with the gap as reason and show me. Send nothing until I agree."
	if s.opts.Writes == nil {
		order = "tell me the gap: this server cannot order."
	}
	// The gap is the buyer's rule of the butter scenario, the same as the
	// demo's and eval's: units_sold_last_24h minus on_hand_units. It does
	// not move with the hour, as units_short_by_close does.
	gapRule := fmt.Sprintf("The gap is units_sold_last_24h minus on_hand_units; where it exceeds %d, %s", gap, order)
	// No store (or "all"): the chain sweep.
	text := fmt.Sprintf(`Call korral_check_stock_risk for SKU %s with store_ids ["all"] (every store I may use). `+
		"Take the stores it lists, in stores and in sweep.more_at_risk (the most at risk before close). %s", sku, gapRule)
	if len(ids) > 0 {
		text = fmt.Sprintf("Call korral_check_stock_risk for SKU %s at stores %s. %s", sku, strings.Join(ids, ","), gapRule)
	}
	return userPrompt("Restock gaps for SKU "+sku, text), nil
}

func (s *server) ordersSince(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	sku, err := promptSKU(args)
	if err != nil {
		return nil, err
	}
	kr := s.storesFor(req.Extra)
	if kr == nil {
		return nil, promptError(apperr.New(apperr.InternalError, "no keyring loaded", ""))
	}
	store, err := kr.Resolve(strings.TrimSpace(args["store_id"]))
	if err != nil {
		if e, ok := err.(*apperr.Error); ok {
			return nil, promptError(e)
		}
		return nil, err
	}
	now := s.opts.Now()
	since := now.Add(-24 * time.Hour)
	if v := strings.TrimSpace(args["since"]); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t, err = time.Parse(time.DateOnly, v)
		}
		if err != nil || t.After(now) || now.Sub(t) > ordersSinceMaxDays*24*time.Hour {
			return nil, invalidArg(fmt.Sprintf("since must be a date or RFC 3339 time in the last %d days", ordersSinceMaxDays),
				fmt.Sprintf("Pass since like %q, or leave it out for the last 24 hours.", now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)))
		}
		since = t
	}
	w := s.opts.Writes
	entries, err := w.Ledger.Recent(ctx, store, sku, since)
	if err != nil {
		return nil, promptError(apperr.New(apperr.StateUnavailable, "the order ledger could not be read", "Try again in a moment."))
	}
	// An order is only ever looked up at the StoreLink it was recorded for.
	entries = slices.DeleteFunc(entries, func(e state.Entry) bool { return e.UpstreamID != "" && e.UpstreamID != w.UpstreamID })
	head := fmt.Sprintf("This server recorded these orders for SKU %s at store %s since %s:", sku, store, since.UTC().Format(time.RFC3339))
	if len(entries) == 0 {
		return userPrompt("Orders since", fmt.Sprintf("This server recorded no order for SKU %s at store %s since %s.", sku, store, since.UTC().Format(time.RFC3339))), nil
	}
	var b strings.Builder
	b.WriteString(head)
	for i, e := range entries {
		if i == ordersListed {
			fmt.Fprintf(&b, "\n- and %d more", len(entries)-ordersListed)
			break
		}
		ref := e.OrderID
		if ref == "" {
			ref = e.IdempotencyKey
		}
		fmt.Fprintf(&b, "\n- %s: %d units, %s, %s", ref, e.QuantityUnits, e.State, e.CreatedAt.UTC().Format(time.RFC3339))
	}
	b.WriteString("\nCall korral_get_order_status for each; tell me if it shipped and when it arrives.")
	return userPrompt("Orders since", b.String()), nil
}

func userPrompt(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

// complete offers store ids from the keyring for store_id, and for the
// last id of store_ids; anything else gets an empty list.
func (s *server) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p.Ref == nil || p.Ref.Type != "ref/prompt" || (p.Ref.Name != promptRestockGaps && p.Ref.Name != promptOrdersSince) {
		return res, nil
	}
	kr := s.storesFor(req.Extra)
	if kr == nil {
		return res, nil
	}
	var prefix string
	var done []string
	switch {
	case p.Argument.Name == "store_id" && p.Ref.Name == promptOrdersSince:
		prefix = strings.TrimSpace(p.Argument.Value)
	case p.Argument.Name == "store_ids" && p.Ref.Name == promptRestockGaps:
		parts := strings.Split(p.Argument.Value, ",")
		prefix = strings.TrimSpace(parts[len(parts)-1])
		for _, d := range parts[:len(parts)-1] {
			done = append(done, strings.TrimSpace(d))
		}
	default:
		return res, nil
	}
	if prefix != "" && !storeIDRE.MatchString(prefix) {
		return res, nil
	}
	// A host replaces the whole argument, so keep the ids already typed.
	lead := ""
	if len(done) > 0 {
		lead = strings.Join(done, ",") + ","
	}
	var values []string
	for _, id := range kr.StoreIDs() {
		if strings.HasPrefix(id, prefix) && !slices.Contains(done, id) {
			values = append(values, lead+id)
		}
	}
	res.Completion.Total = len(values)
	if len(values) > completionValues {
		values, res.Completion.HasMore = values[:completionValues], true
	}
	res.Completion.Values = append(res.Completion.Values, values...)
	return res, nil
}
