package approvals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Options are the parts NewBackend reads and decides through.
type Options struct {
	// Flow is the order workflow; each decision adds a verifier for the
	// session's approver.
	Flow *replenish.Workflow
	// Approvers is the approver register; logins and every page re-read it.
	Approvers approver.Register
	// Audit is the audit trail the console reads and writes.
	Audit state.AuditLog
	// Holds reports whether the keyring holds a store.
	Holds func(storeID string) bool
	Now   func() time.Time
	Log   *slog.Logger
}

// NewBackend is the console.Backend over the order workflow, the approver
// register and the ledger.
func NewBackend(o Options) console.Backend {
	return &consoleBackend{flow: o.Flow, approvers: approver.New(o.Approvers), reg: o.Approvers, audit: o.Audit, holds: o.Holds, now: o.Now, log: o.Log}
}

// consoleBackend implements console.Backend over the order workflow.
type consoleBackend struct {
	flow      *replenish.Workflow
	approvers *approver.Verifier
	reg       approver.Register
	audit     state.AuditLog
	holds     func(storeID string) bool
	now       func() time.Time
	log       *slog.Logger
}

// Bounds of what the console reads in one page.
const (
	// consoleHistoryLen is how many decided orders the history lists.
	consoleHistoryLen = 200
	// consoleAuditLen is how many audit records one day's view reads.
	consoleAuditLen = 5000
	// consoleSalesMax bounds the sales read for "sold in the last 24 h".
	consoleSalesMax = 1000
)

var _ console.Backend = (*consoleBackend)(nil)

// loginRef is the session's login handle: record id and name, so a
// re-added approver ends old sessions.
func loginRef(a state.Approver) string { return strconv.FormatInt(a.ID, 10) + ":" + a.Name }

func parseLoginRef(ref string) (state.Approver, bool) {
	id, name, ok := strings.Cut(ref, ":")
	n, err := strconv.ParseInt(id, 10, 64)
	if !ok || err != nil || name == "" {
		return state.Approver{}, false
	}
	return state.Approver{ID: n, Name: name}, true
}

func toConsole(a state.Approver) console.Approver {
	return console.Approver{Name: a.Name, Stores: slices.Clone(a.Stores), Ref: loginRef(a)}
}

// record is the register's identity of a console approver, for Authorize.
func record(a console.Approver) state.Approver {
	r, ok := parseLoginRef(a.Ref)
	if !ok {
		// An unparsable ref matches no record, so Authorize refuses it.
		return state.Approver{ID: -1, Name: a.Name}
	}
	return r
}

// Login implements console.Backend.
func (b *consoleBackend) Login(ctx context.Context, name, secret, remoteAddr string) (console.Approver, error) {
	a, err := b.approvers.Authenticate(ctx, name, secret)
	switch {
	case errors.Is(err, approver.ErrDenied), errors.Is(err, approver.ErrRevoked):
		// A revoked approver is told what a wrong secret is told.
		return console.Approver{}, console.ErrBadCredentials
	case err != nil:
		return console.Approver{}, err
	}
	b.record(ctx, state.AuditRecord{Time: b.now().UTC(), CallID: "console-login-" + randomHex(6),
		Client: "approver:" + a.Name, Tool: "console.login", Outcome: "ok", Summary: fmt.Sprintf("%s logged in to the approvals console from %s.", a.Name, remoteAddr)})
	return toConsole(a), nil
}

// Active implements Backend: the login's record, if still active.
func (b *consoleBackend) Active(ctx context.Context, ref string) (console.Approver, error) {
	want, ok := parseLoginRef(ref)
	if !ok {
		return console.Approver{}, console.ErrRevoked
	}
	cur, found, err := b.reg.GetApprover(ctx, want.Name)
	if err != nil {
		return console.Approver{}, err
	}
	if !found || cur.ID != want.ID || cur.Revoked() {
		return console.Approver{}, console.ErrRevoked
	}
	return toConsole(cur), nil
}

// covers reports whether a may see orders of storeID: its list of stores.
// A store whose key the keyring lacks is still shown, as an order this
// console cannot send (notSending).
func (b *consoleBackend) covers(a console.Approver, storeID string) bool {
	return len(a.Stores) == 0 || slices.Contains(a.Stores, storeID)
}

// NotSending implements console.Backend: writes off means no order is
// sent from here.
func (b *consoleBackend) NotSending() string {
	if !b.flow.Gate.AllowWrites {
		return "This console cannot send orders: writes are off in this deployment (ALLOW_WRITES is not true, or READ_ONLY is set), so no order can be approved here. You can still reject."
	}
	return ""
}

// notSending says why this console cannot send an order of storeID, with
// the audit trail's error code; "" when it can.
func (b *consoleBackend) notSending(storeID string) (reason, code string) {
	switch {
	case !b.flow.Gate.AllowWrites:
		return b.NotSending(), "WRITES_DISABLED"
	case !b.holds(storeID):
		return fmt.Sprintf("This console cannot send this order: its keyring holds no key for store %s. Approve it from a console or storelink-mcp approvals approve with that key, or reject it here.", storeID), "STORE_NOT_AUTHORIZED"
	}
	return "", ""
}

// authorize re-reads the approver's record for a store and maps the result
// onto console errors.
func (b *consoleBackend) authorize(ctx context.Context, a console.Approver, storeID string) (state.Approver, error) {
	cur, err := b.approvers.Authorize(ctx, record(a), storeID)
	switch {
	case errors.Is(err, approver.ErrRevoked):
		return state.Approver{}, console.ErrRevoked
	case errors.Is(err, approver.ErrOutOfScope):
		return state.Approver{}, console.ErrOutOfScope
	case err != nil:
		return state.Approver{}, err
	}
	return cur, nil
}

// sessionVerifier accepts only the session's approver, re-read from the
// register when the workflow asks. The secret was checked at login.
type sessionVerifier struct {
	approvers *approver.Verifier
	who       state.Approver
}

// Verify implements replenish.Verifier.
func (v sessionVerifier) Verify(ctx context.Context, name, _, storeID string) (replenish.Approver, error) {
	if !approver.SameName(name, v.who.Name) || storeID == "" {
		return replenish.Approver{}, replenish.ErrDenied
	}
	cur, err := v.approvers.Authorize(ctx, v.who, storeID)
	if err != nil {
		return replenish.Approver{}, err
	}
	return replenish.Approver{Name: cur.Name}, nil
}

// decider is the workflow as one session's approver decides through it.
func (b *consoleBackend) decider(who state.Approver) *replenish.Workflow {
	f := *b.flow
	f.Verifier = sessionVerifier{approvers: b.approvers, who: who}
	return &f
}

// Inbox implements console.Backend.
func (b *consoleBackend) Inbox(ctx context.Context, a console.Approver) ([]console.OrderSummary, error) {
	es, err := b.flow.Staged(ctx, false)
	if err != nil {
		return nil, err
	}
	names := b.namer()
	out := []console.OrderSummary{}
	for _, e := range es {
		if e.State != state.StatePendingApproval || !b.covers(a, e.StoreID) {
			continue
		}
		out = append(out, names.summary(ctx, e))
	}
	b.stockouts(ctx, out)
	slices.SortStableFunc(out, func(x, y console.OrderSummary) int {
		if c := console.CompareStockout(x.Stockout, y.Stockout); c != 0 {
			return c
		}
		return x.ExpiresAt.Compare(y.ExpiresAt)
	})
	return out, nil
}

// History implements console.Backend.
func (b *consoleBackend) History(ctx context.Context, a console.Approver) ([]console.DecidedOrder, error) {
	es, err := b.flow.Staged(ctx, true)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(es, func(x, y state.Entry) int { return y.UpdatedAt.Compare(x.UpdatedAt) })
	names := b.namer()
	out := []console.DecidedOrder{}
	for _, e := range es {
		if e.State == state.StatePendingApproval || !b.covers(a, e.StoreID) {
			continue
		}
		sum := names.summary(ctx, e)
		out = append(out, console.DecidedOrder{OrderSummary: sum, Status: consoleStatus(e.State), Decision: decision(e, "", sum.RequestedAt.Location())})
		if len(out) == consoleHistoryLen {
			break
		}
	}
	return out, nil
}

// Order implements Backend: the entry now, with its justification from a
// fresh preview.
func (b *consoleBackend) Order(ctx context.Context, a console.Approver, approvalID string) (console.OrderDetail, error) {
	e, _, err := b.decidable(ctx, a, approvalID)
	if err != nil {
		return console.OrderDetail{}, err
	}
	d := console.OrderDetail{OrderSummary: b.namer().summary(ctx, e), Status: consoleStatus(e.State)}
	loc := d.RequestedAt.Location()
	if e.State != state.StatePendingApproval {
		dec := decision(e, b.rejectReason(ctx, e), loc)
		d.Decision = &dec
	}
	if !b.holds(e.StoreID) {
		d.Justification.Caveat = fmt.Sprintf("This console holds no key for store %s, so it cannot read the store's stock either.", e.StoreID)
		return d, nil
	}
	j, ev, so, err := b.justify(ctx, e, loc)
	if err != nil {
		// Still shown without the evidence, with the reason.
		b.log.Warn("console.evidence_unavailable", "approval_id", e.ApprovalID, "store_id", e.StoreID, "error", err.Error())
		j.Caveat = "StoreLink could not be read just now, so the stock evidence is missing; reload the page to try again."
	}
	d.Justification, d.Evidence, d.Stockout = j, ev, so
	if d.CasePack == 0 {
		d.CasePack = j.CasePack
	}
	return d, nil
}

// AuditDay implements Backend: the day's records of the approver's stores;
// calls without a store only for an all-stores approver.
func (b *consoleBackend) AuditDay(ctx context.Context, a console.Approver, day time.Time) ([]console.AuditRow, error) {
	recs, err := b.audit.QueryAudit(ctx, state.AuditFilter{Day: day, Limit: consoleAuditLen})
	if err != nil {
		return nil, err
	}
	out := []console.AuditRow{}
	for _, r := range recs {
		if r.StoreID == "" && len(a.Stores) > 0 || r.StoreID != "" && !b.covers(a, r.StoreID) {
			continue
		}
		out = append(out, console.AuditRow{Time: r.Time, CallID: r.CallID, Client: r.Client, Tool: r.Tool, StoreID: r.StoreID, SKU: r.SKU,
			Outcome: r.Outcome, ErrorCode: r.ErrorCode, Summary: r.Summary, DurationMS: r.DurationMS})
	}
	return out, nil
}
