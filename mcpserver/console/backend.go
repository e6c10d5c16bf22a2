package console

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Backend is what the console needs from the server: approvers, staged
// orders and the audit trail. The backend decides (scope, single use,
// expiry, four eyes); the console only shows. Every method takes the
// approver Active returned on this request; ErrRevoked ends the session.
type Backend interface {
	// Login verifies an approver's name and secret, returning
	// ErrBadCredentials alike for an unknown name, wrong secret or revoked
	// approver. remoteAddr is for the audit trail.
	Login(ctx context.Context, name, secret, remoteAddr string) (Approver, error)
	// Active returns the approver of a login as the record holds it now,
	// or ErrRevoked. ref is Login's Approver.Ref (Name when empty). The
	// console calls it first on every request.
	Active(ctx context.Context, ref string) (Approver, error)
	// Inbox lists the orders awaiting a decision in the approver's stores,
	// soonest projected stockout first (orders without one last, by
	// expiry). It changes nothing; the console shows a passed
	// ExpiresAt as lapsed.
	Inbox(ctx context.Context, a Approver) ([]OrderSummary, error)
	// Order returns one staged order in any status, or ErrNotFound or
	// ErrOutOfScope.
	Order(ctx context.Context, a Approver, approvalID string) (OrderDetail, error)
	// Approve releases a staged order and sends it. Its verdict is the
	// Outcome; an error (ErrNotFound, ErrOutOfScope, ErrRevoked, internal)
	// means it could not be acted on. ErrLapsed and *DecidedError are also
	// accepted and shown as outcomes. A second call for a sent approval
	// reports OutcomeAlreadyDecided and sends nothing.
	Approve(ctx context.Context, a Approver, approvalID string) (Outcome, error)
	// Reject turns a staged order down with a non-blank reason. It returns
	// ErrNotFound, ErrOutOfScope, ErrLapsed, *DecidedError, ErrRevoked, or
	// an internal failure.
	Reject(ctx context.Context, a Approver, approvalID, reason string) error
	// History lists decided and lapsed orders of the approver's stores,
	// newest first, bounded by the backend.
	History(ctx context.Context, a Approver) ([]DecidedOrder, error)
	// AuditDay returns one UTC day's audit trail (day is its midnight),
	// oldest first, limited to the approver's stores.
	AuditDay(ctx context.Context, a Approver, day time.Time) ([]AuditRow, error)
	// NotSending says, in an approver's words, why this console sends no
	// order at all (writes are off in this deployment), or "" when it can
	// send. Every page shows it. Approve must refuse on its own as well.
	NotSending() string
}

// Approver is a verified approver as the backend's record holds it.
type Approver struct {
	Name string
	// Stores limits the approver to these store ids; empty means all.
	Stores []string
	// Ref is the backend's handle of this login, passed back to Active;
	// empty means Name. It should identify the record, so a login does not
	// survive revoke-and-re-add.
	Ref string
}

// Status is where a staged order stands, as a page shows it.
type Status string

// The statuses a page knows.
const (
	// StatusPending: waiting for a decision.
	StatusPending Status = "pending"
	// StatusSending: approved and being sent right now.
	StatusSending Status = "sending"
	// StatusRaised: approved and accepted by StoreLink.
	StatusRaised Status = "raised"
	// StatusUnknown: sent, but StoreLink's answer was lost; check before
	// anything else.
	StatusUnknown Status = "unknown"
	// StatusFailed: approved, and StoreLink refused the order.
	StatusFailed Status = "failed"
	// StatusRejected: an approver turned it down.
	StatusRejected Status = "rejected"
	// StatusLapsed: nobody decided in time; nothing was sent.
	StatusLapsed Status = "lapsed"
)

// OrderSummary is one staged order as the pages list it.
type OrderSummary struct {
	ApprovalID string
	StoreID    string
	StoreName  string
	SKU        string
	// ProductName is StoreLink's name for the SKU.
	ProductName   string
	QuantityUnits int64
	// CasePack is the units per case; 0 when unknown.
	CasePack int64
	// Reason is the requester's justification as it was staged.
	Reason      string
	RequestedBy string
	RequestedAt time.Time
	ExpiresAt   time.Time
	// NotSending says why this console cannot send this order (writes are
	// off, or it holds no key for the store); "" when it can. The page
	// then offers no approval.
	NotSending string
	// Stockout is when the SKU is projected to run out at the store, as
	// the page is drawn.
	Stockout Stockout
}

// Stockout is a projected stockout window.
type Stockout struct {
	// Known is false when no projection could be made (StoreLink could
	// not be read, or too little history); the rest is then zero.
	Known bool
	// Earliest and Latest bound the stockout; zero when none is projected
	// within HorizonDays.
	Earliest, Latest time.Time
	HorizonDays      int
}

// OrderDetail is one staged order with the evidence a buyer judges it by.
type OrderDetail struct {
	OrderSummary
	Status Status
	// Decision is set once the order is decided or lapsed.
	Decision *Decision
	// Justification is the snapshot taken when the order was staged.
	Justification Justification
	// Evidence is one row per lookback day, oldest first; one chart bar
	// each.
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
	// Headline is the stock-risk decision in the buyer's words, the sentence
	// korral_check_stock_risk answers with for this store and SKU.
	Headline         string
	OnHandUnits      int64
	OnHandAsOf       time.Time
	UnitsSoldLast24h int64
	// StockoutEarliest and StockoutLatest bound the projected stockout;
	// zero when none.
	StockoutEarliest time.Time
	StockoutLatest   time.Time
	// Confidence is the projection's: high, medium, low or none.
	Confidence       string
	LeadTimeDays     *int
	EarliestDelivery time.Time
	// CoverAfterDelivery is the days of cover once the order arrives.
	CoverAfterDelivery *CoverBand
	// SupplierMinimumUnits is the supplier's minimum order; 0 when none.
	SupplierMinimumUnits int64
	CasePack             int64
	// DuplicateWarning names an open order of the same SKU and store.
	DuplicateWarning string
	// Flags are the projection's data-quality flags.
	Flags []string
	// Caveat is the projection's one-sentence caveat.
	Caveat string
	// Check is the quantity check the agent was shown for this order.
	Check QuantityCheck
}

// QuantityCheck is the quantity check's verdict on the order: ok, review
// or refuse, with its reasons in words; an empty Verdict is unknown.
type QuantityCheck struct {
	Verdict string
	Reasons []string
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
	// OutcomeUnknown: sent and the answer lost; it must not be sent again.
	OutcomeUnknown OutcomeKind = "unknown"
	// OutcomeLapsed: the approval ran out; nothing was sent.
	OutcomeLapsed OutcomeKind = "lapsed"
	// OutcomeAlreadyDecided: decided before; Prior, OrderID and DecidedBy
	// say how.
	OutcomeAlreadyDecided OutcomeKind = "already_decided"
	// OutcomeRefused: the server would not send it; Reason says why.
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
	// DecidedBy and DecidedAt (zero when unknown) say who decided and when.
	DecidedBy string
	DecidedAt time.Time
	// Reason is a refusal's reason for the approver; never a secret.
	Reason string
}

// DecidedOrder is one decided or lapsed order in the history.
type DecidedOrder struct {
	OrderSummary
	Status   Status
	Decision Decision
}

// AuditRow is one tool call in the audit trail.
type AuditRow = state.AuditRecord

// The errors a page explains; any other is shown as an internal failure
// with an incident id.
var (
	// ErrBadCredentials: wrong name or secret, or revoked; it counts
	// towards the rate limit.
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
	// Status is what became of it.
	Status    Status
	OrderID   string
	DecidedBy string
	// DecidedAt is when it was decided; zero when unknown.
	DecidedAt time.Time
}

func (e *DecidedError) Error() string {
	return fmt.Sprintf("console: approval already decided (%s)", e.Status)
}
