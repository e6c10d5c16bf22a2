package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Backend is what the console needs from the rest of the server: the
// approver record, the staged orders and the audit trail. The backend
// decides (store scope, single use of an approval, expiry, approver is not
// the requester); the console only shows. Every method takes the approver
// as Active returned it on this request, so a revoked approver or a changed
// scope takes effect at the next click; ErrRevoked ends the session.
// Strings are shown as escaped text, and times in their own location.
type Backend interface {
	// Login verifies an approver's name and secret. It returns
	// ErrBadCredentials for an unknown name, a wrong secret or a revoked
	// approver alike, so a page never tells which. remoteAddr is the
	// client's address, for the backend's audit trail; the console has
	// already applied its own login rate limit.
	Login(ctx context.Context, name, secret, remoteAddr string) (Approver, error)
	// Active returns the approver of a login as the record holds it now, or
	// ErrRevoked when it was revoked, removed or replaced since. ref is the
	// Approver.Ref that Login returned (its Name when Ref was empty). The
	// console calls it on every request of a session, before any other
	// method.
	Active(ctx context.Context, ref string) (Approver, error)
	// Inbox lists the orders waiting for a decision in the approver's
	// stores, soonest expiry first. Listing changes nothing: an approval
	// whose expiry has passed but that nobody has marked is listed with its
	// ExpiresAt, and the console shows it as lapsed.
	Inbox(ctx context.Context, a Approver) ([]OrderSummary, error)
	// Order returns one staged order with its justification snapshot, in
	// any status. ErrNotFound when no approval has that id,
	// ErrOutOfScope when its store is outside the approver's scope.
	Order(ctx context.Context, a Approver, approvalID string) (OrderDetail, error)
	// Approve releases a staged order and sends it to StoreLink. Its
	// verdict is the Outcome (raised, unknown, lapsed, already decided,
	// refused); an error means the approval could not be acted on at all:
	// ErrNotFound, ErrOutOfScope, ErrRevoked, or an internal failure. The
	// console also accepts ErrLapsed and a *DecidedError as errors here and
	// shows them as the matching outcome, so an adapter may pass the
	// workflow's errors through. An approval is single use: a second call
	// for an approval that was sent reports OutcomeAlreadyDecided with the
	// order id, and sends nothing.
	Approve(ctx context.Context, a Approver, approvalID string) (Outcome, error)
	// Reject turns a staged order down with the approver's reason, which
	// the console has checked is not blank. It returns ErrNotFound,
	// ErrOutOfScope, ErrLapsed, a *DecidedError, ErrRevoked, or an internal
	// failure.
	Reject(ctx context.Context, a Approver, approvalID, reason string) error
	// History lists the decided and lapsed orders of the approver's stores,
	// newest decision first. The backend bounds its length.
	History(ctx context.Context, a Approver) ([]DecidedOrder, error)
	// AuditDay returns the audit trail of one UTC calendar day (day is its
	// midnight in UTC), oldest first, limited to the approver's stores:
	// what the agent asked, per call, with outcomes.
	AuditDay(ctx context.Context, a Approver, day time.Time) ([]AuditRow, error)
}

// Approver is a verified approver as the backend's record holds it.
type Approver struct {
	Name string
	// Stores limits the approver to these store ids; empty means every
	// store the deployment serves.
	Stores []string
	// Ref is the backend's handle of this login, which the session keeps
	// and hands back to Active; empty means Name. A backend whose approvers
	// can be revoked and added again under the same name puts the record's
	// identity in it, so an old login does not outlive the rotation.
	Ref string
}

// Status is where a staged order stands, as a page shows it.
type Status string

// The statuses a page knows. A backend maps its ledger states onto them.
const (
	// StatusPending: waiting for a decision.
	StatusPending Status = "pending"
	// StatusSending: approved and being sent right now.
	StatusSending Status = "sending"
	// StatusRaised: approved and accepted by StoreLink.
	StatusRaised Status = "raised"
	// StatusUnknown: approved and sent, but StoreLink's answer was lost; the
	// order may exist and its status must be checked before anything else.
	StatusUnknown Status = "unknown"
	// StatusFailed: approved, and StoreLink refused the order.
	StatusFailed Status = "failed"
	// StatusRejected: an approver turned it down.
	StatusRejected Status = "rejected"
	// StatusLapsed: nobody decided before the approval ran out; nothing was
	// sent.
	StatusLapsed Status = "lapsed"
)

// OrderSummary is one staged order as the inbox, the order page and the
// history show it.
type OrderSummary struct {
	ApprovalID string
	StoreID    string
	StoreName  string
	SKU        string
	// ProductName is StoreLink's name for the SKU.
	ProductName   string
	QuantityUnits int64
	// CasePack is the units per case; 0 when unknown. The console derives
	// the quantity in cases from it.
	CasePack int64
	// Reason is the requester's justification as it was staged.
	Reason      string
	RequestedBy string
	RequestedAt time.Time
	ExpiresAt   time.Time
}

// OrderDetail is one staged order with the evidence a buyer judges it by.
type OrderDetail struct {
	OrderSummary
	Status Status
	// Decision is set once the order is decided or lapsed.
	Decision *Decision
	// Justification is the snapshot taken when the order was staged.
	Justification Justification
	// Evidence is one row per day of the lookback, oldest first, from the
	// same projection the risk tool returns; the chart draws one bar per row.
	Evidence []EvidenceDay
}

// Decision is what became of a staged order.
type Decision struct {
	// By is the approver who decided; empty for a lapsed approval.
	By string
	At time.Time
	// OrderID is StoreLink's order id when the order was raised.
	OrderID string
	// Note is the rejection reason, or StoreLink's refusal.
	Note string
}

// Justification is the stock evidence behind a staged order. A zero time,
// a nil pointer or an empty string means unknown, and the page says so.
type Justification struct {
	OnHandUnits      int64
	OnHandAsOf       time.Time
	UnitsSoldLast24h int64
	// StockoutEarliest and StockoutLatest bound the projected stockout; both
	// zero when the projection gave no window.
	StockoutEarliest time.Time
	StockoutLatest   time.Time
	// Confidence is the projection's: high, medium, low or none.
	Confidence       string
	LeadTimeDays     *int
	EarliestDelivery time.Time
	// CoverAfterDelivery is the days of cover the order gives once it
	// arrives, as a band from the sell-rate band.
	CoverAfterDelivery *CoverBand
	// SupplierMinimumUnits is the supplier's minimum order; 0 when none.
	SupplierMinimumUnits int64
	CasePack             int64
	// DuplicateWarning names an open order of the same SKU at the same
	// store; empty when there is none.
	DuplicateWarning string
	// Flags are the projection's data-quality flags.
	Flags []string
	// Caveat is the projection's one-sentence caveat.
	Caveat string
}

// CoverBand is a [Low, High] band of days.
type CoverBand struct {
	Low, High float64
}

// EvidenceDay is one day of the lookback.
type EvidenceDay struct {
	// Date is the store-local date, YYYY-MM-DD.
	Date      string
	UnitsSold int64
	// Flags mark the day: closed, zero_sales, possible_stockout,
	// bulk_dominated, no_history.
	Flags []string
}

// OutcomeKind is the verdict of an approval.
type OutcomeKind string

// The verdicts of Approve.
const (
	// OutcomeRaised: StoreLink accepted the order; OrderID is set.
	OutcomeRaised OutcomeKind = "raised"
	// OutcomeUnknown: the order was sent and the answer was lost. It may
	// exist upstream; approving again must not send it twice.
	OutcomeUnknown OutcomeKind = "unknown"
	// OutcomeLapsed: the approval ran out before it could be sent; nothing
	// was sent.
	OutcomeLapsed OutcomeKind = "lapsed"
	// OutcomeAlreadyDecided: somebody (perhaps this approver a moment ago)
	// decided it before; Prior, OrderID and DecidedBy say how.
	OutcomeAlreadyDecided OutcomeKind = "already_decided"
	// OutcomeRefused: the server would not send it (the write gate, the
	// quantity ceiling, approver = requester, StoreLink's refusal);
	// Reason says why, and nothing was raised.
	OutcomeRefused OutcomeKind = "refused"
)

// Outcome is what an approval did.
type Outcome struct {
	Kind OutcomeKind
	// OrderID is StoreLink's order id (raised, or already decided as raised).
	OrderID string
	// OrderStatus is StoreLink's status of a raised order, e.g. submitted.
	OrderStatus     string
	ExpectedArrival time.Time
	// Prior is the status an already-decided order has.
	Prior Status
	// DecidedBy names who decided an already-decided order, and DecidedAt
	// when (zero when unknown).
	DecidedBy string
	DecidedAt time.Time
	// Reason is a refusal's reason, written for the approver; it must hold
	// no secret.
	Reason string
}

// DecidedOrder is one decided or lapsed order in the history.
type DecidedOrder struct {
	OrderSummary
	Status   Status
	Decision Decision
}

// AuditRow is one tool call of the agent, as the audit trail keeps it: the
// trail's own record (state.AuditRecord). The console shows its time, call,
// caller, tool, store, SKU, outcome, summary and duration.
type AuditRow = state.AuditRecord

// The errors a Backend returns that a page explains. Any other error is
// shown as an internal failure with an incident id, and logged.
var (
	// ErrBadCredentials: Login found no approver with that name and secret
	// (or a revoked one). It counts towards the login rate limit.
	ErrBadCredentials = errors.New("console: approver name or secret is wrong")
	// ErrRevoked: the approver was revoked or removed; the session ends.
	ErrRevoked = errors.New("console: approver revoked")
	// ErrNotFound: no staged order has that approval id.
	ErrNotFound = errors.New("console: no such approval")
	// ErrOutOfScope: the order's store is outside the approver's scope.
	ErrOutOfScope = errors.New("console: order outside the approver's stores")
	// ErrLapsed: the approval ran out; nothing was sent.
	ErrLapsed = errors.New("console: approval lapsed")
)

// DecidedError reports that an approval was decided before this request.
type DecidedError struct {
	// Status is what became of it: raised, rejected, lapsed, failed,
	// unknown or sending.
	Status    Status
	OrderID   string
	DecidedBy string
	// DecidedAt is when it was decided; zero when unknown.
	DecidedAt time.Time
}

func (e *DecidedError) Error() string {
	return fmt.Sprintf("console: approval already decided (%s)", e.Status)
}
