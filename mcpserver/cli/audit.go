package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// toolNames are the server's tools, as the audit trail records them. A test
// compares the list with the real server's tools/list.
var toolNames = []string{
	"korral_list_authorized_stores", "korral_check_stock_risk", "korral_list_recent_sales",
	"korral_get_order_status", "korral_raise_replenishment_order",
}

// fullToolName accepts a tool's full name or the short one the trail's
// table prints (check_stock_risk), the approval actions
// (approvals.approve) and the prompts (prompt.korral_restock_gaps).
// Anything else is refused rather than matching nothing in silence.
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
	rest, err := parseFlags(fs, args, env)
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
	a, err := loadConfig(env)
	if err != nil {
		return err
	}
	defer a.Close()
	if report {
		stats, err := a.db.Report(ctx, f)
		if err != nil {
			return err
		}
		// The pilot questions span tools, so they ignore --tool.
		pf := f
		pf.Tool, pf.Limit = "", 0
		recs, err := a.db.QueryAudit(ctx, pf)
		if err != nil {
			return err
		}
		return printReport(env.Stdout, stats, answerPilot(recs), *format)
	}
	recs, err := a.db.QueryAudit(ctx, f)
	if err != nil {
		return err
	}
	return printTrail(env.Stdout, recs, *format)
}

func printTrail(w io.Writer, recs []state.AuditRecord, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		for _, r := range recs {
			if err := enc.Encode(auditJSON(r)); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME (UTC)\tCALL\tWHO\tTOOL\tSTORE\tSKU\tOUTCOME\tSUMMARY")
	for _, r := range recs {
		outcome := r.Outcome
		if r.ErrorCode != "" {
			outcome += " " + r.ErrorCode
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.UTC().Format("2006-01-02 15:04:05"), shown(r.CallID),
			shown(orDash(r.Client)), shown(strings.TrimPrefix(r.Tool, "korral_")), shown(orDash(r.StoreID)), shown(orDash(r.SKU)), shown(outcome), shown(r.Summary))
	}
	if len(recs) == 0 {
		fmt.Fprintln(tw, "(no audit events match)")
	}
	return tw.Flush()
}

func auditJSON(r state.AuditRecord) map[string]any {
	m := map[string]any{"time": r.Time.UTC().Format(time.RFC3339Nano), "call_id": r.CallID, "client": r.Client, "session": r.Session,
		"tool": r.Tool, "store_id": r.StoreID, "sku": r.SKU, "outcome": r.Outcome, "error_code": r.ErrorCode,
		"summary": r.Summary, "duration_ms": r.DurationMS}
	if r.TraceID != "" {
		// The call's trace in the tracing backend (docs/observability.md).
		m["trace_id"] = r.TraceID
	}
	return m
}

// toolStatsJSON is a tool's line of the report in the JSON output.
type toolStatsJSON struct {
	Tool       string         `json:"tool"`
	Calls      int            `json:"calls"`
	OK         int            `json:"ok"`
	Errors     int            `json:"errors"`
	ErrorRate  float64        `json:"error_rate"`
	P50MS      float64        `json:"p50_ms"`
	P95MS      float64        `json:"p95_ms"`
	P99MS      float64        `json:"p99_ms"`
	ErrorCodes map[string]int `json:"error_codes"`
}

func printReport(w io.Writer, stats []state.ToolStats, p pilot, format string) error {
	if format == "json" {
		tools := make([]toolStatsJSON, len(stats))
		for i, s := range stats {
			tools[i] = toolStatsJSON{Tool: s.Tool, Calls: s.Calls, OK: s.OK, Errors: s.Errors, ErrorRate: s.ErrorRate,
				P50MS: s.P50, P95MS: s.P95, P99MS: s.P99, ErrorCodes: s.ErrorCodes}
		}
		return json.NewEncoder(w).Encode(struct {
			Tools []toolStatsJSON `json:"tools"`
			Pilot pilot           `json:"pilot"`
		}{tools, p})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TOOL\tCALLS\tOK\tERRORS\tERROR RATE\tP50 MS\tP95 MS\tP99 MS\tERROR CODES\t")
	for _, s := range stats {
		var codes []string
		for c, n := range s.ErrorCodes {
			codes = append(codes, fmt.Sprintf("%s=%d", shown(c), n))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f%%\t%.1f\t%.1f\t%.1f\t%s\t\n", shown(s.Tool), s.Calls, s.OK, s.Errors, 100*s.ErrorRate, s.P50, s.P95, s.P99, orDash(strings.Join(sorted(codes), " ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nPilot questions:\n  %s\n  %s\n",
		share("risk checks followed by korral_list_recent_sales for the same store and SKU in the same session", p.FollowedBySales, p.RiskChecks),
		share("orders raised whose status was checked afterwards (korral_get_order_status, same store and SKU)", p.StatusChecked, p.OrdersRaised))
	return err
}

func share(what string, n, of int) string {
	if of == 0 {
		return what + ": none to count"
	}
	return fmt.Sprintf("%s: %d of %d (%.1f%%)", what, n, of, 100*float64(n)/float64(of))
}

// pilot answers the two questions that decide whether the tool surface
// should change. If buyers' agents mostly follow a risk check with the raw
// sales, the check's evidence is not enough on its own; if they rarely check
// an order after raising it, the status tool earns no place in every turn's
// context.
type pilot struct {
	// RiskChecks counts successful risk checks that belong to a session
	// (stateless HTTP calls have none, so no follow-up can be told).
	RiskChecks int `json:"risk_checks"`
	// FollowedBySales counts those followed, later in the same session, by
	// korral_list_recent_sales for the same store and SKU.
	FollowedBySales int `json:"followed_by_sales"`
	// OrdersRaised counts orders the server sent to StoreLink.
	OrdersRaised int `json:"orders_raised"`
	// StatusChecked counts those followed, later and in any session (a
	// buyer often checks the next day), by korral_get_order_status for the
	// same store and SKU.
	StatusChecked int `json:"status_checked"`
}

// raisedPrefix starts the audit summary of a raise that reached StoreLink,
// as opposed to a preview, a staged order or a replay.
const raisedPrefix = "Raised order "

// answerPilot counts over records in time order, as QueryAudit returns them.
func answerPilot(recs []state.AuditRecord) pilot {
	var p pilot
	for i, r := range recs {
		if r.Outcome != state.OutcomeOK || r.StoreID == "" || r.SKU == "" {
			continue
		}
		later := recs[i+1:]
		switch {
		case r.Tool == "korral_check_stock_risk" && r.Session != "":
			p.RiskChecks++
			if slices.ContainsFunc(later, func(n state.AuditRecord) bool {
				return n.Tool == "korral_list_recent_sales" && n.Session == r.Session && n.StoreID == r.StoreID && n.SKU == r.SKU
			}) {
				p.FollowedBySales++
			}
		case r.Tool == "korral_raise_replenishment_order" && strings.HasPrefix(r.Summary, raisedPrefix):
			p.OrdersRaised++
			if slices.ContainsFunc(later, func(n state.AuditRecord) bool {
				return n.Tool == "korral_get_order_status" && n.StoreID == r.StoreID && n.SKU == r.SKU
			}) {
				p.StatusChecked++
			}
		}
	}
	return p
}
