package cli

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// runAudit prints the audit trail, or a report over it.
func runAudit(ctx context.Context, args []string, env Env) error {
	report := len(args) > 0 && args[0] == "report"
	if report {
		args = args[1:]
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	day := fs.String("day", "", "only this UTC day, YYYY-MM-DD")
	store := fs.String("store", "", "only this store id")
	callID := fs.String("call", "", "only this call id")
	tool := fs.String("tool", "", "only this tool")
	limit := fs.Int("limit", 0, "only the most recent N events (0: all)")
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	f := state.AuditFilter{StoreID: *store, CallID: *callID, Tool: *tool, Limit: *limit}
	if *day != "" {
		d, err := time.Parse("2006-01-02", *day)
		if err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("--day %q: want YYYY-MM-DD", *day)}
		}
		f.Day = d
	}
	if *format != "text" && *format != "json" {
		return &ExitError{Code: 2, Err: fmt.Errorf("--format %q: want text or json", *format)}
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
		return printReport(env.Stdout, stats, *format)
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
	return map[string]any{"time": r.Time.UTC().Format(time.RFC3339Nano), "call_id": r.CallID, "client": r.Client, "session": r.Session,
		"tool": r.Tool, "store_id": r.StoreID, "sku": r.SKU, "outcome": r.Outcome, "error_code": r.ErrorCode,
		"summary": r.Summary, "duration_ms": r.DurationMS}
}

func printReport(w io.Writer, stats []state.ToolStats, format string) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(stats)
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
	return tw.Flush()
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// shown is how a stored value appears in a human-facing table: agents and
// clients wrote it, so a line break, a tab or a terminal escape in it must
// show as an escape, never start a forged row or move the cursor. JSON
// output needs no such care: its encoder escapes control characters.
func shown(s string) string { return textsafe.Escape(s) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runApprovals is the human side of approval mode: list, show, approve or
// reject staged orders. Deciding needs the approval credential, which the
// agent never sees; without one configured every decision fails closed.
func runApprovals(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		return &ExitError{Code: 2, Err: errors.New("approvals: want list, show ID, approve ID or reject ID")}
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("approvals "+verb, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	as := fs.String("as", "", "the name of the person deciding (recorded in the audit trail)")
	credFile := fs.String("credential-file", "", "file holding the approver's credential (else APPROVER_CREDENTIAL)")
	if err := fs.Parse(args); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	id := fs.Arg(0)
	if verb != "list" && id == "" {
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: missing approval id", verb)}
	}
	switch verb {
	case "list", "show":
		a, err := loadConfig(env)
		if err != nil {
			return err
		}
		defer a.Close()
		if verb == "list" {
			entries, err := a.db.Pending(ctx, a.now())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "APPROVAL ID\tSTORE\tSKU\tUNITS\tREQUESTED BY\tEXPIRES\tREASON")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", shown(e.ApprovalID), shown(e.StoreID), shown(e.SKU), e.QuantityUnits, shown(e.RequestedBy), e.ApprovalExpiresAt.Format(time.RFC3339), shown(e.Reason))
			}
			if len(entries) == 0 {
				fmt.Fprintln(tw, "(no orders await approval)")
			}
			return tw.Flush()
		}
		e, found, err := a.db.ByApprovalID(ctx, id)
		if err != nil {
			return err
		}
		if !found {
			return &ExitError{Code: 1, Err: fmt.Errorf("no staged order with approval id %s", id)}
		}
		return json.NewEncoder(env.Stdout).Encode(entryJSON(e))
	case "approve", "reject":
		if strings.TrimSpace(*as) == "" {
			return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: --as NAME is required, so the audit trail says who decided", verb)}
		}
		return decide(ctx, env, verb, id, strings.TrimSpace(*as), *credFile)
	default:
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals: unknown action %q", verb)}
	}
}

func entryJSON(e state.Entry) map[string]any {
	return map[string]any{"approval_id": e.ApprovalID, "idempotency_key": e.IdempotencyKey, "state": e.State, "store_id": e.StoreID,
		"sku": e.SKU, "quantity_units": e.QuantityUnits, "reason": e.Reason, "requested_by": e.RequestedBy, "decided_by": e.DecidedBy,
		"order_id": e.OrderID, "expires_at": e.ApprovalExpiresAt.Format(time.RFC3339), "created_at": e.CreatedAt.Format(time.RFC3339)}
}

// errApprovalDenied is the one answer to every credential problem, so the
// command reveals nothing about why a credential failed.
var errApprovalDenied = errors.New("approval denied: the approval credential is missing or does not match; nothing was changed")

func decide(ctx context.Context, env Env, verb, id, who, credFile string) error {
	a, err := buildUpstream(ctx, env)
	if err != nil {
		return err
	}
	defer a.Close()
	cfg := a.cfg
	presented := env.Getenv("APPROVER_CREDENTIAL")
	if credFile != "" {
		b, err := env.ReadFile(credFile)
		if err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("--credential-file: cannot read %s", credFile)}
		}
		presented = strings.TrimRight(string(b), "\r\n")
	}
	if !credentialMatches(cfg.ApprovalCredential, presented) {
		a.log.Warn("approval.denied", "approval_id", id, "decided_by", who, "action", verb)
		recordDecision(ctx, a, id, who, verb, "error", "APPROVAL_DENIED", fmt.Sprintf("%s tried to %s %s without a valid approval credential; nothing changed.", who, verb, id))
		return &ExitError{Code: 1, Err: errApprovalDenied}
	}
	now := a.now()
	if verb == "reject" {
		e, err := a.db.Reject(ctx, id, who, now)
		if err != nil {
			return &ExitError{Code: 1, Err: fmt.Errorf("reject %s: %w", id, err)}
		}
		recordDecision(ctx, a, id, who, verb, "ok", "", fmt.Sprintf("%s rejected the staged order %s (%d unit(s) of SKU %s for store %s); nothing was sent.", who, id, e.QuantityUnits, e.SKU, e.StoreID))
		fmt.Fprintf(env.Stdout, "rejected %s\n", id)
		return nil
	}
	// Approving runs the same gate the tool runs, then the same ledger and
	// breaker: a person's approval does not lift the deployment's limits.
	pending, found, err := a.db.ByApprovalID(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return &ExitError{Code: 1, Err: fmt.Errorf("no staged order with approval id %s", id)}
	}
	if !cfg.AllowWrites || cfg.ReadOnly {
		return &ExitError{Code: 1, Err: errors.New("this deployment does not allow writes (ALLOW_WRITES); nothing was sent")}
	}
	if pending.QuantityUnits > int64(cfg.MaxOrderUnits) {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d units is above MAX_ORDER_UNITS=%d; nothing was sent", pending.QuantityUnits, cfg.MaxOrderUnits)}
	}
	if _, ok := a.keys.Key(pending.StoreID); !ok {
		return &ExitError{Code: 1, Err: fmt.Errorf("store %s is not in this deployment's keyring; nothing was sent", pending.StoreID)}
	}
	e, err := a.db.Claim(ctx, id, who, now)
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("approve %s: %w", id, err)}
	}
	req := domain.OrderRequest{SKU: e.SKU, QuantityUnits: e.QuantityUnits, Reason: e.Reason}
	o, err := mcpserver.SendLedgered(ctx, a.up, a.db, e.IdempotencyKey, e.StoreID, req, a.now)
	if err != nil {
		ae := apperr.From(err)
		recordDecision(ctx, a, id, who, verb, "error", string(ae.Code), fmt.Sprintf("%s approved %s but StoreLink did not take it: %s.", who, id, ae.Message))
		return &ExitError{Code: 1, Err: fmt.Errorf("approved, but sending failed: %s: %s", ae.Code, ae.Message)}
	}
	recordDecision(ctx, a, id, who, verb, "ok", "", fmt.Sprintf("%s approved %s: order %s raised for %d unit(s) of SKU %s at store %s.", who, id, o.ID, e.QuantityUnits, e.SKU, e.StoreID))
	fmt.Fprintf(env.Stdout, "approved %s: order %s raised (%s)\n", id, o.ID, o.Status)
	return nil
}

// credentialMatches compares in constant time; hashing first makes the time
// independent of the lengths too. An empty configured credential never
// matches: approval fails closed.
func credentialMatches(configured, presented string) bool {
	if configured == "" || presented == "" {
		return false
	}
	want := sha256.Sum256([]byte(configured))
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

func recordDecision(ctx context.Context, a *app, id, who, verb, outcome, code, summary string) {
	e, _, _ := a.db.ByApprovalID(ctx, id)
	rec := state.AuditRecord{Time: a.now().UTC(), CallID: "approval-" + id, Client: "approver:" + who, Tool: "approvals." + verb,
		StoreID: e.StoreID, SKU: e.SKU, Outcome: outcome, ErrorCode: code, Summary: summary}
	if err := a.db.RecordAudit(ctx, rec); err != nil {
		a.log.Error("audit.write_failed", "error", err.Error())
	}
	a.log.Info("audit", "call_id", rec.CallID, "client", rec.Client, "tool", rec.Tool, "store_id", rec.StoreID, "sku", rec.SKU,
		"outcome", outcome, "error_code", code, "summary", summary)
}
