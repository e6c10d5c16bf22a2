package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver"
)

// writeText prints the run for a person at a terminal.
func writeText(w io.Writer, d *demoRun) {
	clock := "real time"
	if d.fixedNow != "" {
		clock = "fixed at " + d.fixedNow + " (STORELINK_MOCK_NOW)"
	}
	fmt.Fprintln(w, "The butter scenario, run for real")
	fmt.Fprintln(w, "  server: storelink-mcp over stdio, embedded mock StoreLink, "+strings.Join(d.env, " ")+", fresh state database")
	fmt.Fprintln(w, "  clock:  "+clock)
	fmt.Fprintln(w, "  agent:  scripted (eval/scenarios.json, "+d.scenario.Name+"); its arguments and decisions come from the server's answers")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Buyer: "+d.run.Request)
	for i, s := range d.run.Steps {
		fmt.Fprintln(w)
		writeAsked(w, d, i)
		if s.Note != "" {
			for j, line := range strings.Split(s.Note, "\n") {
				prefix := "      agent: "
				if j > 0 {
					prefix = "             "
				}
				fmt.Fprintln(w, prefix+line)
			}
		}
		fmt.Fprintf(w, "  %2d  → %s %s\n", i+1, s.Call.Name, compactJSON(s.Call.Arguments))
		fmt.Fprintf(w, "      ← %s: %s\n", s.Outcome, summarize(s.Call.Name, s.Result))
	}
	fmt.Fprintln(w)
	writeAsked(w, d, len(d.run.Steps))
	fmt.Fprintln(w, "Answer:")
	for _, line := range strings.Split(d.run.Answer, "\n") {
		fmt.Fprintln(w, "  "+line)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Decisions:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STORE\tSOLD 24 H\tON HAND\tGAP\tDECISION\tORDER")
	for _, r := range decisionRows(d) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.store, r.sold, r.onHand, r.gap, r.decision, r.order)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written (the ledger in the state database, read after the server exited):")
	if len(d.ledger) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	for _, e := range d.ledger {
		fmt.Fprintf(w, "  store %s, SKU %s, %d units, %s, order %s\n", e.StoreID, e.SKU, e.QuantityUnits, e.State, orDash(e.OrderID))
	}
}

// writeAsked prints the questions put to the buyer after the first n
// calls, with the buyer's replies.
func writeAsked(w io.Writer, d *demoRun, n int) {
	for _, x := range d.run.Asked {
		if x.AfterStep != n {
			continue
		}
		for j, line := range strings.Split(x.Question, "\n") {
			prefix := "      agent: "
			if j > 0 {
				prefix = "             "
			}
			fmt.Fprintln(w, prefix+line)
		}
		fmt.Fprintln(w, "      buyer: "+x.Reply)
		fmt.Fprintln(w)
	}
}

// decisionRow is one store's line of the outcome table.
type decisionRow struct {
	store, sold, onHand, gap, decision, order string
}

// decisionRows reads the agent's restock decisions (the outputs of its
// restock_gap policy steps) and the orders the ledger holds.
func decisionRows(d *demoRun) []decisionRow {
	var rows []decisionRow
	for _, st := range d.scenario.Trajectory {
		if st.Policy != "restock_gap" {
			continue
		}
		out, ok := d.model.Bindings()[st.ID].(map[string]any)
		if !ok {
			continue
		}
		store := text(out["store_id"])
		with := st.With
		r := decisionRow{store: store, sold: "?", onHand: "?", gap: text(out["gap"]), order: "-"}
		if v, ok := resolved(d, with["sold"]); ok {
			r.sold = text(v)
		}
		if v, ok := resolved(d, with["on_hand"]); ok {
			r.onHand = text(v)
		}
		if out["exceeds"] == true {
			r.decision = fmt.Sprintf("order %s units (%s cases of %s, the gap rounded up to whole cases)", text(out["quantity"]), text(out["cases"]), text(out["case_pack"]))
		} else {
			r.decision = fmt.Sprintf("no order: %s does not exceed %s", text(out["gap"]), text(with["threshold"]))
		}
		for _, e := range d.ledger {
			if e.StoreID == store {
				r.order = fmt.Sprintf("%s, %d units, %s", orDash(e.OrderID), e.QuantityUnits, e.State)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// resolved follows a "{{ref}}" policy input to the value the model saw.
func resolved(d *demoRun, v any) (any, bool) {
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "{{") || !strings.HasSuffix(s, "}}") {
		return nil, false
	}
	return d.model.Lookup(s[2 : len(s)-2])
}

// summarize gives the key numbers of one tool answer in a line.
func summarize(tool string, result json.RawMessage) string {
	var env map[string]any
	if err := json.Unmarshal(result, &env); err != nil {
		return "unreadable answer"
	}
	if ok, _ := env["ok"].(bool); !ok {
		return fmt.Sprintf("%s: %s", text(get(env, "error.code")), text(get(env, "error.message")))
	}
	d, _ := env["data"].(map[string]any)
	switch tool {
	case "korral_list_authorized_stores":
		var parts []string
		stores, _ := d["stores"].([]any)
		for _, s := range stores {
			m, _ := s.(map[string]any)
			state := "closed now"
			if m["open_now"] == true {
				state = "open, closes in " + text(m["closes_in_minutes"]) + " min"
			}
			parts = append(parts, fmt.Sprintf("%s %s (%s, today %s, %s)", text(m["store_id"]), plain(m["name"]), when(m["local_time_now"]), text(m["opening_hours_today"]), state))
		}
		return fmt.Sprintf("%s store(s): %s", text(d["count"]), strings.Join(parts, "; "))
	case "korral_check_stock_risk":
		id, _ := d["product"].(map[string]any)
		var parts []string
		for _, st := range asList(d["stores"]) {
			m, _ := st.(map[string]any)
			r, ok := m["risk"].(map[string]any)
			if !ok {
				parts = append(parts, fmt.Sprintf("store %s: %s", text(m["store_id"]), text(get(m, "error.code"))))
				continue
			}
			rate, window := "unknown", append(asList(r["stockout_window"]), nil, nil)
			if band := asList(r["units_per_trading_hour"]); len(band) == 2 {
				rate = text(band[0]) + " to " + text(band[1])
			}
			parts = append(parts, fmt.Sprintf("store %s: %q On hand %s (counted %s), sold %s in the last 24 h; sells %s units per trading hour; "+
				"stockout before close today: %s (between %s and %s, %s confidence); earliest delivery %s, beats the stockout: %s; data notes: %s",
				text(m["store_id"]), text(r["headline"]), text(r["on_hand_units"]), when(r["on_hand_as_of"]), text(r["units_sold_last_24h"]), rate,
				text(r["will_stockout_before_close_today"]), when(window[0]), when(window[1]),
				text(r["confidence"]), when(r["earliest_delivery"]), text(r["arrival_beats_stockout"]), list(r["data_quality_notes"])))
		}
		return fmt.Sprintf("%s (case pack %s, lead time %s days): %s",
			plain(id["name"]), text(id["case_pack"]), text(id["lead_time_days"]), strings.Join(parts, "; "))
	case "korral_list_recent_sales":
		return fmt.Sprintf("%s units in %s transaction(s) from %s to %s (total complete: %s)",
			text(d["units_sold_in_window"]), text(d["count_total_available"]), when(d["window_start"]), when(d["window_end"]), text(d["units_total_complete"]))
	case "korral_raise_replenishment_order":
		qty := text(get(d, "request.body.quantity_units"))
		switch d["mode"] {
		case "preview":
			cover := "unknown"
			if c, ok := get(d, "justification.days_of_cover_after_delivery").(map[string]any); ok {
				cover = text(c["low"]) + " to " + text(c["high"]) + " days"
			}
			check := text(get(d, "quantity_check.verdict"))
			if reasons := list(get(d, "quantity_check.reasons")); reasons != "none" {
				check += " (" + reasons + ")"
			}
			return fmt.Sprintf("preview, nothing sent: %s units of %s to store %s; quantity check %s; cover after delivery %s; open orders of this SKU: %d; idempotency key %s",
				qty, plain(d["product_name"]), text(d["store_id"]), check, cover, len(asList(d["open_orders_same_sku"])), text(d["idempotency_key"]))
		case "raised":
			return fmt.Sprintf("raised order %s: %s units, status %s, expected %s", text(d["order_id"]), qty, text(d["order_status"]), when(d["expected_arrival"]))
		case "pending_approval":
			return fmt.Sprintf("staged for a person's approval (%s), nothing sent", text(d["approval_id"]))
		default:
			return fmt.Sprintf("%s of an earlier request, nothing sent now: order %s", text(d["mode"]), orDash(text(d["order_id"])))
		}
	case "korral_get_order_status":
		return fmt.Sprintf("order %s: %s, %s units of %s, submitted %s, expected %s",
			text(d["order_id"]), text(d["status"]), text(d["quantity_units"]), plain(d["product_name"]), when(d["submitted_at"]), when(d["expected_arrival"]))
	}
	return "ok"
}

func get(m map[string]any, path string) any {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func list(v any) string {
	var parts []string
	for _, e := range asList(v) {
		parts = append(parts, text(e))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// text shows a JSON value as a person reads it.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return "-"
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// plain shows upstream text without its untrusted-data markers; the
// markers are for the model, the person reading the demo knows.
func plain(v any) string {
	s, _ := mcpserver.UntrustedText(text(v))
	return s
}

// when shortens a store-local RFC 3339 time to weekday, date and clock.
func when(v any) string {
	s, ok := v.(string)
	if !ok || s == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.Format("Mon 2 Jan 15:04")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
