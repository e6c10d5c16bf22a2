package state

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// EntryState is where a replenishment order stands in the ledger.
type EntryState string

// The ledger's states; machine.go holds the transitions.
const (
	// StateSending: reserved and about to be, or being, sent to StoreLink.
	StateSending EntryState = "sending"
	// StateRaised: StoreLink accepted the order; OrderID is set.
	StateRaised EntryState = "raised"
	// StateFailed: StoreLink refused the order; the key is spent.
	StateFailed EntryState = "failed"
	// StateRetryable: StoreLink did not take the order; the same request
	// may be sent again under the same key.
	StateRetryable EntryState = "retryable"
	// StateUnknown: the send ended without a verdict; the order must be
	// checked, not resent.
	StateUnknown EntryState = "unknown"
	// StatePendingApproval: staged, waiting for a human decision.
	StatePendingApproval EntryState = "pending_approval"
	// StateRejected: a human turned the staged order down.
	StateRejected EntryState = "rejected"
	// StateExpired: nobody decided before the approval ran out.
	StateExpired EntryState = "expired"
)

// Valid reports whether s is one of the ledger's states.
func (s EntryState) Valid() bool {
	switch s {
	case StateSending, StateRaised, StateFailed, StateRetryable, StateUnknown, StatePendingApproval, StateRejected, StateExpired:
		return true
	}
	return false
}

// Entry is one replenishment order, keyed by its idempotency key.
type Entry struct {
	IdempotencyKey string
	StoreID        string
	SKU            string
	QuantityUnits  int64
	Reason         string
	// RequestHash identifies the request, so a reused key is detected
	// (RequestHash).
	RequestHash string
	State       EntryState
	// OrderID is StoreLink's order id once the order is raised.
	OrderID      string
	ErrorCode    string
	ErrorMessage string
	// ApprovalID names the staged approval; empty if never staged.
	ApprovalID string
	// ApprovalExpiresAt is when the approval lapses; zero if never staged.
	ApprovalExpiresAt time.Time
	// RequestedBy is who asked: MCP client and session, or a token label.
	RequestedBy string
	// DecidedBy is who approved, rejected or resolved the order.
	DecidedBy string
	// UpstreamID names the StoreLink the order was sent or staged for
	// (ADR 0007); empty for old entries.
	UpstreamID string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ErrNotFound reports that no ledger entry matches.
var ErrNotFound = errors.New("state: no such ledger entry")

// First returns the first entry found, ErrNotFound for none, or err if set.
func First(es []Entry, err error) (Entry, error) {
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 {
		return Entry{}, ErrNotFound
	}
	return es[0], nil
}

// ErrNotPending reports an approval that was already claimed, rejected or
// expired.
var ErrNotPending = errors.New("state: approval is not pending")

// ErrInvalidTransition reports a state change the ledger does not allow.
var ErrInvalidTransition = errors.New("state: invalid ledger transition")

// Ledger is the idempotency ledger and its staged approvals. Every method
// is atomic, also across processes sharing the store.
type Ledger interface {
	// Reserve inserts e if its key is free, or takes over a StateRetryable
	// entry of the same request, returning the stored entry and true. Else
	// it returns the existing entry and false; the caller compares
	// RequestHash. The same request sending or unknown under another key
	// gives an *InFlightError.
	Reserve(ctx context.Context, e Entry) (Entry, bool, error)
	// Finish records the verdict on an entry in StateSending: StateRaised
	// (with orderID), StateFailed, StateRetryable or StateUnknown (with
	// the error); other entries give ErrInvalidTransition.
	Finish(ctx context.Context, key string, state EntryState, orderID, errCode, errMsg string, now time.Time) (Entry, error)
	// Apply moves the entry under key by one event, as one conditional
	// update. An order id another entry of the same StoreLink holds gives
	// *OrderIDTakenError (Finish alike).
	Apply(ctx context.Context, key string, ev Event, ch Change, now time.Time) (Entry, error)
	// Get returns the entry reserved under key.
	Get(ctx context.Context, key string) (Entry, bool, error)
	// ByOrderID returns the entry that raised StoreLink order orderID.
	ByOrderID(ctx context.Context, orderID string) (Entry, bool, error)
	// ByApprovalID returns the entry staged under approvalID.
	ByApprovalID(ctx context.Context, approvalID string) (Entry, bool, error)
	// Recent lists a store and SKU's entries created since, newest first.
	Recent(ctx context.Context, storeID, sku string, since time.Time) ([]Entry, error)
	// Pending lists unexpired entries awaiting approval, oldest first.
	Pending(ctx context.Context, now time.Time) ([]Entry, error)
	// Staged lists every entry ever staged, oldest first.
	Staged(ctx context.Context) ([]Entry, error)
	// Claim moves a pending, unexpired entry to StateSending with
	// decidedBy; exactly one concurrent caller wins, others get
	// ErrNotPending. Also ErrNotFound or *InFlightError.
	Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error)
	// Reject moves a pending entry to StateRejected; errors as Claim.
	Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error)
	// Expire moves lapsed pending entries to StateExpired; returns how many.
	Expire(ctx context.Context, now time.Time) (int, error)
}

// RequestHash returns an order request's fingerprint. The reason is folded
// (FoldReason) and every field length-prefixed, so distinct requests never
// collide and equivalent spellings do.
func RequestHash(storeID, sku string, quantityUnits int64, reason string) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range []string{storeID, sku, FoldReason(reason)} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], uint64(quantityUnits))
	h.Write(n[:])
	return hex.EncodeToString(h.Sum(nil))
}

// checkNew rejects entries Reserve must not store.
func checkNew(e Entry) error {
	switch {
	case e.IdempotencyKey == "":
		return errors.New("state: reserve: empty idempotency key")
	case e.StoreID == "" || e.SKU == "":
		return fmt.Errorf("state: reserve %q: store id and SKU are required", e.IdempotencyKey)
	case e.QuantityUnits <= 0:
		return fmt.Errorf("state: reserve %q: quantity must be positive, got %d", e.IdempotencyKey, e.QuantityUnits)
	}
	switch e.State {
	case StateSending:
		if e.ApprovalID != "" || !e.ApprovalExpiresAt.IsZero() {
			return fmt.Errorf("state: reserve %q: an approval belongs only to a %s entry", e.IdempotencyKey, StatePendingApproval)
		}
	case StatePendingApproval:
		if e.ApprovalID == "" || e.ApprovalExpiresAt.IsZero() {
			return fmt.Errorf("state: reserve %q: a %s entry needs an approval id and expiry", e.IdempotencyKey, StatePendingApproval)
		}
	default:
		return fmt.Errorf("state: reserve %q: a new entry must be %s or %s, not %q", e.IdempotencyKey, StateSending, StatePendingApproval, e.State)
	}
	return nil
}
