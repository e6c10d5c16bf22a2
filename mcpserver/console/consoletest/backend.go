// Package consoletest provides an in-memory console.Backend and fixtures
// for tests. It keeps a real backend's rules (scope, single use, expiry,
// four eyes) and counts its calls.
package consoletest

import (
	"context"
	"crypto/subtle"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

// Clock is a settable clock for tests (mcptest.Clock).
type Clock = mcptest.Clock

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return mcptest.NewClock(t) }

type approver struct {
	secret  string
	stores  []string
	revoked bool
}

type staged struct {
	detail console.OrderDetail
}

// Backend is an in-memory console.Backend; make one with New.
type Backend struct {
	mu        sync.Mutex
	now       func() time.Time
	approvers map[string]*approver
	orders    map[string]*staged
	audit     []auditEntry
	raised    []string
	calls     map[string]int
	// NotSingleUse makes Approve raise an already-raised approval again,
	// to test the console's own double-click guard.
	NotSingleUse bool
	// WritesOff makes the backend a deployment without ALLOW_WRITES: it
	// says so, and Approve refuses and writes an audit row.
	WritesOff bool
}

// writesOff is what the backend says when WritesOff is set.
const writesOff = "This console cannot send orders: writes are off in this deployment (ALLOW_WRITES is not true). You can still reject."

// NotSending implements console.Backend.
func (b *Backend) NotSending() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.WritesOff {
		return writesOff
	}
	return ""
}

// summary is o's summary as a page gets it. The caller holds mu.
func (b *Backend) summary(o *staged) console.OrderSummary {
	s := o.detail.OrderSummary
	if b.WritesOff {
		s.NotSending = writesOff
	}
	return s
}

type auditEntry struct {
	row console.AuditRow
}

// New returns an empty backend on the clock now.
func New(now func() time.Time) *Backend {
	return &Backend{now: now, approvers: map[string]*approver{}, orders: map[string]*staged{}, calls: map[string]int{}}
}

// AddApprover records an approver with a secret, limited to stores (none:
// all).
func (b *Backend) AddApprover(name, secret string, stores ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.approvers[name] = &approver{secret: secret, stores: stores}
}

// Revoke revokes an approver.
func (b *Backend) Revoke(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.approvers[name]; a != nil {
		a.revoked = true
	}
}

// SetStores changes an approver's scope.
func (b *Backend) SetStores(name string, stores ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.approvers[name]; a != nil {
		a.stores = stores
	}
}

// Stage adds a staged order waiting for a decision.
func (b *Backend) Stage(d console.OrderDetail) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d.Status = console.StatusPending
	d.Decision = nil
	b.orders[d.ApprovalID] = &staged{detail: d}
}

// Claim marks a staged order as being sent by name since at, as an
// unfinished approval elsewhere leaves it.
func (b *Backend) Claim(id, name string, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if o := b.orders[id]; o != nil {
		o.detail.Status = console.StatusSending
		o.detail.Decision = &console.Decision{By: name, At: at}
	}
}

// AddAudit adds a row to the audit trail.
func (b *Backend) AddAudit(r console.AuditRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.audit = append(b.audit, auditEntry{row: r})
}

// Calls returns how often a method (its name, e.g. "Approve") was called.
func (b *Backend) Calls(method string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[method]
}

// TotalCalls returns how many calls the backend got, of every method.
func (b *Backend) TotalCalls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.calls {
		n += c
	}
	return n
}

// Raised returns the StoreLink order ids raised so far.
func (b *Backend) Raised() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.raised)
}

// Status returns an approval's status, a passed expiry read as lapsed.
func (b *Backend) Status(id string) console.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.orders[id]
	if o == nil {
		return ""
	}
	return b.status(o)
}

func (b *Backend) status(o *staged) console.Status {
	if o.detail.Status == console.StatusPending && !b.now().Before(o.detail.ExpiresAt) {
		return console.StatusLapsed
	}
	return o.detail.Status
}

// active returns name's record, or ErrRevoked. The caller holds mu.
func (b *Backend) active(name string) (*approver, error) {
	a := b.approvers[name]
	if a == nil || a.revoked {
		return nil, console.ErrRevoked
	}
	return a, nil
}

func inScope(a *approver, store string) bool {
	return len(a.stores) == 0 || slices.Contains(a.stores, store)
}

// find returns the staged order for approver name, checking scope from the
// record.
func (b *Backend) find(name, id string) (*staged, error) {
	a, err := b.active(name)
	if err != nil {
		return nil, err
	}
	o := b.orders[id]
	if o == nil {
		return nil, console.ErrNotFound
	}
	if !inScope(a, o.detail.StoreID) {
		return nil, console.ErrOutOfScope
	}
	return o, nil
}

// Login implements console.Backend.
func (b *Backend) Login(_ context.Context, name, secret, _ string) (console.Approver, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Login"]++
	a := b.approvers[name]
	if a == nil || a.revoked || subtle.ConstantTimeCompare([]byte(a.secret), []byte(secret)) != 1 {
		return console.Approver{}, console.ErrBadCredentials
	}
	return console.Approver{Name: name, Stores: slices.Clone(a.stores)}, nil
}

// Active implements console.Backend.
func (b *Backend) Active(_ context.Context, name string) (console.Approver, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Active"]++
	a, err := b.active(name)
	if err != nil {
		return console.Approver{}, err
	}
	return console.Approver{Name: name, Stores: slices.Clone(a.stores)}, nil
}

// Inbox implements console.Backend.
func (b *Backend) Inbox(_ context.Context, ap console.Approver) ([]console.OrderSummary, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Inbox"]++
	a, err := b.active(ap.Name)
	if err != nil {
		return nil, err
	}
	var out []console.OrderSummary
	for _, o := range b.orders {
		if o.detail.Status == console.StatusPending && inScope(a, o.detail.StoreID) {
			out = append(out, b.summary(o))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if c := console.CompareStockout(out[i].Stockout, out[j].Stockout); c != 0 {
			return c < 0
		}
		if !out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ExpiresAt.Before(out[j].ExpiresAt)
		}
		return out[i].ApprovalID < out[j].ApprovalID
	})
	return out, nil
}

// Order implements console.Backend.
func (b *Backend) Order(_ context.Context, ap console.Approver, id string) (console.OrderDetail, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Order"]++
	o, err := b.find(ap.Name, id)
	if err != nil {
		return console.OrderDetail{}, err
	}
	d := o.detail
	d.OrderSummary = b.summary(o)
	d.Status = b.status(o)
	return d, nil
}

// Approve implements console.Backend: single use (unless NotSingleUse),
// expiry at send time, approver ≠ requester.
func (b *Backend) Approve(_ context.Context, ap console.Approver, id string) (console.Outcome, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Approve"]++
	o, err := b.find(ap.Name, id)
	if err != nil {
		return console.Outcome{}, err
	}
	d := &o.detail
	if d.Status != console.StatusPending && !(b.NotSingleUse && d.Status == console.StatusRaised) {
		dec := console.Outcome{Kind: console.OutcomeAlreadyDecided, Prior: d.Status}
		if d.Decision != nil {
			dec.OrderID, dec.DecidedBy, dec.DecidedAt = d.Decision.OrderID, d.Decision.By, d.Decision.At
		}
		return dec, nil
	}
	if d.RequestedBy == ap.Name {
		return console.Outcome{Kind: console.OutcomeRefused, Reason: "you requested this order, so another approver must decide it"}, nil
	}
	if b.WritesOff {
		b.audit = append(b.audit, auditEntry{row: console.AuditRow{Time: b.now().UTC(), CallID: "approval-" + id, Client: "approver:" + ap.Name,
			Tool: "approvals.approve", StoreID: d.StoreID, SKU: d.SKU, Outcome: "error", ErrorCode: "WRITES_DISABLED",
			Summary: ap.Name + " tried to approve " + id + " in the console, which cannot send: writes are off; nothing was sent."}})
		return console.Outcome{Kind: console.OutcomeRefused, Reason: "this console cannot send orders: writes are off in this deployment; nothing was sent"}, nil
	}
	// Times in the store's timezone, as the summary's.
	now := b.now().In(d.RequestedAt.Location())
	if !now.Before(d.ExpiresAt) {
		d.Status = console.StatusLapsed
		d.Decision = &console.Decision{At: d.ExpiresAt}
		return console.Outcome{Kind: console.OutcomeLapsed}, nil
	}
	orderID := fmt.Sprintf("RO-%06d", 100001+len(b.raised))
	b.raised = append(b.raised, orderID)
	d.Status = console.StatusRaised
	d.Decision = &console.Decision{By: ap.Name, At: now, OrderID: orderID}
	return console.Outcome{Kind: console.OutcomeRaised, OrderID: orderID, OrderStatus: "submitted", ExpectedArrival: d.Justification.EarliestDelivery}, nil
}

// Reject implements console.Backend.
func (b *Backend) Reject(_ context.Context, ap console.Approver, id, reason string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["Reject"]++
	o, err := b.find(ap.Name, id)
	if err != nil {
		return err
	}
	d := &o.detail
	if d.Status != console.StatusPending {
		e := &console.DecidedError{Status: d.Status}
		if d.Decision != nil {
			e.OrderID, e.DecidedBy, e.DecidedAt = d.Decision.OrderID, d.Decision.By, d.Decision.At
		}
		return e
	}
	if !b.now().Before(d.ExpiresAt) {
		d.Status = console.StatusLapsed
		d.Decision = &console.Decision{At: d.ExpiresAt}
		return console.ErrLapsed
	}
	d.Status = console.StatusRejected
	d.Decision = &console.Decision{By: ap.Name, At: b.now().In(d.RequestedAt.Location()), Note: reason}
	return nil
}

// History implements console.Backend.
func (b *Backend) History(_ context.Context, ap console.Approver) ([]console.DecidedOrder, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["History"]++
	a, err := b.active(ap.Name)
	if err != nil {
		return nil, err
	}
	var out []console.DecidedOrder
	for _, o := range b.orders {
		st := b.status(o)
		if st == console.StatusPending || !inScope(a, o.detail.StoreID) {
			continue
		}
		dec := console.Decision{At: o.detail.ExpiresAt}
		if o.detail.Decision != nil {
			dec = *o.detail.Decision
		}
		out = append(out, console.DecidedOrder{OrderSummary: o.detail.OrderSummary, Status: st, Decision: dec})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Decision.At.After(out[j].Decision.At) })
	return out, nil
}

// AuditDay implements console.Backend.
func (b *Backend) AuditDay(_ context.Context, ap console.Approver, day time.Time) ([]console.AuditRow, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls["AuditDay"]++
	a, err := b.active(ap.Name)
	if err != nil {
		return nil, err
	}
	start := day.UTC().Truncate(24 * time.Hour)
	var out []console.AuditRow
	for _, e := range b.audit {
		t := e.row.Time.UTC()
		if t.Before(start) || !t.Before(start.Add(24*time.Hour)) {
			continue
		}
		if e.row.StoreID != "" && !inScope(a, e.row.StoreID) {
			continue
		}
		out = append(out, e.row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

var _ console.Backend = (*Backend)(nil)
