package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/state"
)

const auditSynopsis = "Usage: storelink-mcp audit [report] [flags]\n\nPrint the audit trail, oldest first; \"report\" prints per-tool statistics and the\npilot questions instead. --tool takes a short (check_stock_risk) or full name."

// toolNames are the server's tools as the audit trail records them (a test
// checks them against tools/list).
var toolNames = []string{
	"korral_list_authorized_stores", "korral_check_stock_risk", "korral_list_recent_sales",
	"korral_get_order_status", "korral_raise_replenishment_order",
}

// fullToolName accepts a tool's full or short name, an approval action
// (approvals.approve) or a prompt (prompt.korral_restock_gaps), and refuses
// anything else.
func fullToolName(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "approvals.") || strings.HasPrefix(name, "prompt.") {
		return name, nil
	}
	full := name
	if !strings.HasPrefix(full, "korral_") {
		full = "korral_" + full
	}
	if !slices.Contains(toolNames, full) {
		short := make([]string, len(toolNames))
		for i, n := range toolNames {
			short[i] = strings.TrimPrefix(n, "korral_")
		}
		return "", fmt.Errorf("--tool %q: not a tool; want one of %s (with or without korral_), approvals.ACTION, or prompt.NAME", name, strings.Join(short, ", "))
	}
	return full, nil
}

// runAudit prints the audit trail, or a report over it.
func runAudit(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	day := fs.String("day", "", "only this UTC `day`, YYYY-MM-DD")
	store := fs.String("store", "", "only this store `id`")
	callID := fs.String("call", "", "only this call `id`")
	tool := fs.String("tool", "", "only this `tool`, short (check_stock_risk) or full (korral_check_stock_risk)")
	limit := fs.Int("limit", 0, "only the most recent `N` events (0: all; the report ignores it)")
	format := fs.String("format", "text", "text or json")
	rest, err := parseFlags(fs, args, env, auditSynopsis)
	if err != nil {
		return err
	}
	report := len(rest) > 0 && rest[0] == "report"
	if report {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return usageError("audit: unexpected argument %q (want audit [report] [flags])", rest[0])
	}
	name, err := fullToolName(*tool)
	if err != nil {
		return usageError("audit: %v", err)
	}
	f := state.AuditFilter{StoreID: *store, CallID: *callID, Tool: name, Limit: *limit}
	if *day != "" {
		d, err := time.Parse("2006-01-02", *day)
		if err != nil {
			return usageError("audit: --day %q: want YYYY-MM-DD", *day)
		}
		f.Day = d
	}
	if *format != "text" && *format != "json" {
		return usageError("audit: --format %q: want text or json", *format)
	}
	a, err := app.New(ctx, env.options(), app.StateOnly)
	if err != nil {
		return err
	}
	defer a.Close()
	if report {
		stats, err := a.State().Report(ctx, f)
		if err != nil {
			return err
		}
		// The pilot questions span tools, so they ignore --tool.
		pf := f
		pf.Tool, pf.Limit = "", 0
		recs, err := a.State().QueryAudit(ctx, pf)
		if err != nil {
			return err
		}
		return printReport(env.Stdout, stats, answerPilot(recs), *format)
	}
	recs, err := a.State().QueryAudit(ctx, f)
	if err != nil {
		return err
	}
	return printTrail(env.Stdout, recs, *format)
}
