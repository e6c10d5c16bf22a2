package cli

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

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

// runApprovals is the human side of the write path: list, show, approve or
// reject staged orders, and resolve an order whose outcome is unknown.
// Deciding needs the approval credential, which the agent never sees;
// without one configured every decision fails closed. Flags may come before
// or after the id.
func runApprovals(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("approvals", flag.ContinueOnError)
	as := fs.String("as", "", "the name of the person deciding (recorded in the audit trail)")
	credFile := fs.String("credential-file", "", "file holding the approver's credential (else APPROVER_CREDENTIAL)")
	all := fs.Bool("all", false, "list: every staged order, decided and lapsed ones too")
	raised := fs.String("raised", "", "resolve: the StoreLink order id that the order became")
	notRaised := fs.Bool("not-raised", false, "resolve: StoreLink holds no such order")
	pos, err := cliflag.Parse(fs, args, synopses["approvals"], env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if len(pos) == 0 {
		return &ExitError{Code: 2, Err: errors.New("approvals: want list [--all], show ID, approve ID, reject ID or resolve KEY (see --help)")}
	}
	verb, pos := pos[0], pos[1:]
	if verb == "list" && len(pos) > 0 || verb != "list" && len(pos) > 1 {
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: unexpected argument %q", verb, pos[len(pos)-1])}
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
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
			// Listing is where lapsed approvals are written down as expired.
			if _, err := a.db.Expire(ctx, a.now()); err != nil {
				return err
			}
			entries, err := a.db.Pending(ctx, a.now())
			if *all {
				entries, err = a.db.Staged(ctx)
			}
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "APPROVAL ID\tSTATE\tSTORE\tSKU\tUNITS\tREQUESTED BY\tEXPIRES\tREASON")
			for _, e := range entries {
				e = e.AsOf(a.now())
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", shown(e.ApprovalID), e.State, shown(e.StoreID), shown(e.SKU), e.QuantityUnits, shown(e.RequestedBy), e.ApprovalExpiresAt.Format(time.RFC3339), shown(e.Reason))
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
		return json.NewEncoder(env.Stdout).Encode(entryJSON(e.AsOf(a.now())))
	case "approve", "reject", "resolve":
		if strings.TrimSpace(*as) == "" {
			return &ExitError{Code: 2, Err: fmt.Errorf("approvals %s: --as NAME is required, so the audit trail says who decided", verb)}
		}
		if verb == "resolve" {
			if (*raised == "") == !*notRaised {
				return &ExitError{Code: 2, Err: errors.New("approvals resolve: give exactly one of --raised ORDER_ID or --not-raised")}
			}
			return resolve(ctx, env, id, strings.TrimSpace(*as), *credFile, *raised)
		}
		return decide(ctx, env, verb, id, strings.TrimSpace(*as), *credFile)
	default:
		return &ExitError{Code: 2, Err: fmt.Errorf("approvals: unknown action %q", verb)}
	}
}

func entryJSON(e state.Entry) map[string]any {
	return map[string]any{"approval_id": e.ApprovalID, "idempotency_key": e.IdempotencyKey, "state": e.State, "store_id": e.StoreID,
		"sku": e.SKU, "quantity_units": e.QuantityUnits, "reason": e.Reason, "requested_by": e.RequestedBy, "decided_by": e.DecidedBy,
		"order_id": e.OrderID, "expires_at": e.ApprovalExpiresAt.Format(time.RFC3339), "created_at": e.CreatedAt.Format(time.RFC3339),
		"storelink": e.UpstreamID}
}

// errApprovalDenied is the one answer to every credential problem, so the
// command reveals nothing about why a credential failed.
var errApprovalDenied = errors.New("approval denied: the approval credential is missing or does not match; nothing was changed")

// presentedCredential is the approver's credential, from --credential-file
// or APPROVER_CREDENTIAL (fromEnv, as config read it).
func presentedCredential(env Env, fromEnv, credFile string) (string, error) {
	if credFile == "" {
		return fromEnv, nil
	}
	b, err := env.ReadFile(credFile)
	if err != nil {
		return "", &ExitError{Code: 2, Err: fmt.Errorf("--credential-file: cannot read %s", credFile)}
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func decide(ctx context.Context, env Env, verb, id, who, credFile string) error {
	a, err := loadConfig(env)
	if err != nil {
		return err
	}
	defer a.Close()
	cfg := a.cfg
	presented, err := presentedCredential(env, cfg.ApproverCredential, credFile)
	if err != nil {
		return err
	}
	if !credentialMatches(cfg.ApprovalCredential, presented) {
		a.log.Warn("approval.denied", "approval_id", id, "decided_by", who, "action", verb)
		recordDecision(ctx, a, id, who, verb, "error", "APPROVAL_DENIED", fmt.Sprintf("%s tried to %s %s without a valid approval credential; nothing changed.", who, verb, id))
		return &ExitError{Code: 1, Err: errApprovalDenied}
	}
	now := a.now()
	pending, found, err := a.db.ByApprovalID(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return &ExitError{Code: 1, Err: fmt.Errorf("no staged order with approval id %s", id)}
	}
	if st := pending.AsOf(now).State; st != state.StatePendingApproval {
		return &ExitError{Code: 1, Err: fmt.Errorf("%s %s: the staged order is %s, no longer pending; nothing changed", verb, id, st)}
	}
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
	if !cfg.AllowWrites || cfg.ReadOnly {
		return &ExitError{Code: 1, Err: errors.New("this deployment does not allow writes (ALLOW_WRITES); nothing was sent")}
	}
	if pending.QuantityUnits > int64(cfg.MaxOrderUnits) {
		return &ExitError{Code: 1, Err: fmt.Errorf("%d units is above MAX_ORDER_UNITS=%d; nothing was sent", pending.QuantityUnits, cfg.MaxOrderUnits)}
	}
	if err := reach(ctx, env, a, pending); err != nil {
		recordDecision(ctx, a, id, who, verb, "error", "APPROVAL_NOT_SENT", fmt.Sprintf("%s tried to approve %s, but it was not sent: %v.", who, id, err))
		return err
	}
	// The tool's quantity gate, read again now: a supplier's minimum may
	// have changed since the order was staged, and StoreLink would refuse it.
	if err := mcpserver.CheckOrderQuantity(ctx, a.up, pending.StoreID, pending.SKU, pending.QuantityUnits, int64(cfg.MaxOrderUnits)); err != nil {
		ae := apperr.From(err)
		recordDecision(ctx, a, id, who, verb, "error", string(ae.Code), fmt.Sprintf("%s tried to approve %s, but it was not sent: %s.", who, id, ae.Message))
		return &ExitError{Code: 1, Err: fmt.Errorf("approve %s: %s: %s; the approval still stands, and rejecting it is the way to close it", id, ae.Code, ae.Message)}
	}
	e, err := a.db.Claim(ctx, id, who, now)
	if err != nil {
		var fl *state.InFlightError
		if errors.As(err, &fl) {
			return &ExitError{Code: 1, Err: fmt.Errorf("approve %s: the same order is already %s under idempotency key %s; resolve that first; nothing changed", id, fl.Entry.State, fl.Entry.IdempotencyKey)}
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("approve %s: %w", id, err)}
	}
	rec := a.recorder
	if rec == nil {
		rec = &journal.Recorder{Ledger: a.db, Log: a.log, Now: a.now}
	}
	sent, err := mcpserver.SendLedgered(ctx, a.up, rec, e, a.now)
	if err != nil {
		ae := apperr.From(err)
		after, _, _ := a.db.ByApprovalID(ctx, id)
		recordDecision(ctx, a, id, who, verb, "error", string(ae.Code), fmt.Sprintf("%s approved %s but StoreLink did not take it: %s; the entry is now %s.", who, id, ae.Message, after.State))
		if after.State == state.StatePendingApproval {
			return &ExitError{Code: 1, Err: fmt.Errorf("not sent: %s: %s; the approval still stands, approve again later", ae.Code, ae.Message)}
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("approved, but StoreLink did not raise the order: %s: %s (the entry is now %s)", ae.Code, ae.Message, after.State)}
	}
	o := sent.Order
	recordDecision(ctx, a, id, who, verb, "ok", "", fmt.Sprintf("%s approved %s: order %s raised for %d unit(s) of SKU %s at store %s.", who, id, o.ID, e.QuantityUnits, e.SKU, e.StoreID))
	fmt.Fprintf(env.Stdout, "approved %s: order %s raised (%s)\n", id, o.ID, o.Status)
	if !sent.Recorded {
		// The order exists at StoreLink; only its record is behind.
		switch {
		case sent.Conflict != "":
			fmt.Fprintf(env.Stdout, "warning: the ledger holds another outcome for %s, left as it was: %s\n", e.IdempotencyKey, sent.Conflict)
		case sent.Journaled:
			fmt.Fprintf(env.Stdout, "warning: the ledger could not record order %s yet; the outcome journal %s keeps it, and the next start or doctor records it\n", o.ID, a.recorder.Journal.Path())
		default:
			fmt.Fprintf(env.Stdout, "warning: neither the ledger nor the outcome journal could record order %s: record it with storelink-mcp approvals resolve %s --raised %s\n", o.ID, e.IdempotencyKey, o.ID)
		}
	}
	return nil
}

// reach connects a to the StoreLink the entry was recorded for and proves
// that the store's key opens it, before anything in the ledger changes. The
// StoreLink is the one the entry names, so an approver needs no
// UPSTREAM_BASE_URL, only the keyring with that store's key; a configured
// UPSTREAM_BASE_URL must name the same StoreLink. An embedded StoreLink
// lives inside one server process and cannot be reached from here.
func reach(ctx context.Context, env Env, a *app, e state.Entry) error {
	refuse := func(format string, args ...any) error {
		return &ExitError{Code: 1, Err: fmt.Errorf(format+"; nothing changed", args...)}
	}
	target := e.UpstreamID
	switch configured := a.cfg.UpstreamBaseURL; {
	case strings.HasPrefix(target, embeddedPrefix):
		return refuse("%s was staged for the embedded mock StoreLink inside one server process, which no other process can reach; reject it, and stage orders against a real StoreLink (UPSTREAM_BASE_URL)", orDash(e.ApprovalID))
	case target == "" && configured == "":
		return refuse("the ledger does not say which StoreLink %s was recorded for: set UPSTREAM_BASE_URL to the StoreLink the server uses", e.IdempotencyKey)
	case target == "":
		target = upstreamIdentity(configured)
	case configured != "" && upstreamIdentity(configured) != target:
		return refuse("%s was recorded for the StoreLink at %s, but UPSTREAM_BASE_URL names %s: unset it or point it at %s", e.IdempotencyKey, target, upstreamIdentity(configured), target)
	}
	if a.cfg.Keyring == nil {
		return refuse("no key for store %s: set STORELINK_KEYRING_FILE (or STORELINK_KEYRING) to a keyring holding store %s's key for %s", e.StoreID, e.StoreID, target)
	}
	if err := a.connect(env, target, a.cfg.Keyring); err != nil {
		return err
	}
	a.upstreamID = target
	if _, ok := a.keys.Key(e.StoreID); !ok {
		return refuse("the keyring holds no key for store %s: add store %s's key for %s to it", e.StoreID, e.StoreID, target)
	}
	if _, err := a.up.Store(ctx, e.StoreID); err != nil {
		ae := apperr.From(err)
		return refuse("StoreLink at %s could not be used with store %s's key (%s: %s)", target, e.StoreID, ae.Code, ae.Message)
	}
	return nil
}

// embeddedPrefix begins the identity of an embedded StoreLink.
const embeddedPrefix = "embedded:"

// upstreamIdentity names a StoreLink for the ledger: its base URL without
// user info, query or trailing slash (nothing secret is kept), or, for the
// embedded mock, a name of its own, since every process starts its own.
func upstreamIdentity(baseURL string) string {
	if baseURL == "" {
		return embeddedPrefix + callid.New()
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return baseURL
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimRight(u.String(), "/")
}

// resolve records what a person found at StoreLink about an order whose
// outcome is unknown (or that a crash left sending): the order id it became,
// which is checked against StoreLink first (same store, SKU and quantity,
// submitted no earlier than the entry, held by no other entry), or that
// StoreLink holds no such order, which lets the same request be sent again.
func resolve(ctx context.Context, env Env, key, who, credFile, orderID string) error {
	a, err := loadConfig(env)
	if err != nil {
		return err
	}
	defer a.Close()
	// In approval mode, deciding anything about an order needs the approval
	// credential; elsewhere the state file's owner is the person in charge.
	if a.cfg.ApprovalCredential != "" {
		presented, err := presentedCredential(env, a.cfg.ApproverCredential, credFile)
		if err != nil {
			return err
		}
		if !credentialMatches(a.cfg.ApprovalCredential, presented) {
			return &ExitError{Code: 1, Err: errApprovalDenied}
		}
	}
	e, found, err := a.db.Get(ctx, key)
	if err != nil {
		return err
	}
	if !found {
		if e, found, err = a.db.ByApprovalID(ctx, key); err != nil {
			return err
		}
	}
	if !found {
		return &ExitError{Code: 1, Err: fmt.Errorf("no ledger entry with idempotency key or approval id %s", key)}
	}
	ev, ch := state.EventResolveNotRaised, state.Change{DecidedBy: who, ErrorCode: string(apperr.WriteOutcomeUnknown),
		ErrorMessage: who + " found no such order at StoreLink"}
	if orderID != "" {
		if _, ok := state.Next(e.State, state.EventResolveRaised); !ok {
			return &ExitError{Code: 1, Err: fmt.Errorf("%s is %s, not unknown; nothing changed", e.IdempotencyKey, e.State)}
		}
		if err := reach(ctx, env, a, e); err != nil {
			return err
		}
		o, err := a.up.Order(ctx, e.StoreID, orderID)
		if err != nil {
			ae := apperr.From(err)
			return &ExitError{Code: 1, Err: fmt.Errorf("order %s could not be read at StoreLink (%s: %s); nothing changed", orderID, ae.Code, ae.Message)}
		}
		if err := checkFoundOrder(e, o); err != nil {
			return &ExitError{Code: 1, Err: err}
		}
		ev, ch = state.EventResolveRaised, state.Change{DecidedBy: who, OrderID: o.ID}
	}
	got, err := a.db.Apply(ctx, e.IdempotencyKey, ev, ch, a.now())
	if taken := orderTaken(err, ch.OrderID); taken != nil {
		return &ExitError{Code: 1, Err: taken}
	}
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("resolve %s: %w; nothing changed", e.IdempotencyKey, err)}
	}
	summary := fmt.Sprintf("%s resolved %s (%d unit(s) of SKU %s at store %s): now %s.", who, e.IdempotencyKey, e.QuantityUnits, e.SKU, e.StoreID, got.State)
	rec := state.AuditRecord{Time: a.now().UTC(), CallID: "resolve-" + e.IdempotencyKey, Client: "person:" + who, Tool: "approvals.resolve",
		StoreID: e.StoreID, SKU: e.SKU, Outcome: "ok", Summary: summary}
	if err := a.db.RecordAudit(ctx, rec); err != nil {
		a.log.Error("audit.write_failed", "error", err.Error())
	}
	fmt.Fprintf(env.Stdout, "resolved %s: %s\n", e.IdempotencyKey, got.State)
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
