package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// printTrail prints the audit records as a table or JSON lines.
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
		// The call's trace in the tracing backend.
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

// pilot counts how agents use the tools: whether risk checks are followed
// by raw sales lookups, and whether raised orders are checked afterwards.
type pilot struct {
	// RiskChecks counts successful risk checks within a session.
	RiskChecks int `json:"risk_checks"`
	// FollowedBySales counts those later followed in the session by
	// korral_list_recent_sales for the same store and SKU.
	FollowedBySales int `json:"followed_by_sales"`
	// OrdersRaised counts orders the server sent to StoreLink.
	OrdersRaised int `json:"orders_raised"`
	// StatusChecked counts orders later followed, in any session, by
	// korral_get_order_status for the same store and SKU.
	StatusChecked int `json:"status_checked"`
}

// raisedPrefix starts the audit summary of a raise that reached StoreLink.
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
