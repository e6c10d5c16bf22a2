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

// The ledger's states. An entry starts in StateSending (sent straight away)
// or StatePendingApproval (staged for a human); the transition table in
// machine.go says where each state may go.
const (
	// StateSending: reserved and about to be, or being, sent to StoreLink.
	StateSending EntryState = "sending"
	// StateRaised: StoreLink accepted the order; OrderID is set.
	StateRaised EntryState = "raised"
	// StateFailed: StoreLink definitely refused the order (a validation error,
	// a business rule); nothing was created upstream and the key is spent.
	StateFailed EntryState = "failed"
	// StateRetryable: StoreLink certainly did not take the order (nothing
	// left, or it was refused before acceptance for a passing reason);
	// the same request may be sent again under the same key.
	StateRetryable EntryState = "retryable"
	// StateUnknown: the send ended without a verdict (a timeout, a lost
	// response); the order may exist upstream and must be checked, not resent.
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

// Entry is one replenishment order as the ledger knows it, keyed by its
// idempotency key.
type Entry struct {
	IdempotencyKey string
	StoreID        string
	SKU            string
	QuantityUnits  int64
	Reason         string
	// RequestHash identifies the request (store, SKU, quantity, reason), so
	// that a key reused for a different request is detected rather than
	// replayed. See RequestHash.
	RequestHash string
	State       EntryState
	// OrderID is StoreLink's order id once the order is raised.
	OrderID      string
	ErrorCode    string
	ErrorMessage string
	// ApprovalID names the staged approval; empty when the order was never
	// staged.
	ApprovalID string
	// ApprovalExpiresAt is when the staged approval lapses; zero when the
	// order was never staged.
	ApprovalExpiresAt time.Time
	// RequestedBy is who asked for the order: the MCP client and session, or
	// a token label.
	RequestedBy string
	// DecidedBy is who approved or rejected a staged order, or resolved an
	// unknown outcome.
	DecidedBy string
	// UpstreamID names the StoreLink the order was sent or staged for (see
	// ADR 0007); an approval acts only on that StoreLink. Empty for entries
	// recorded before it was kept.
	UpstreamID string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ErrNotFound reports that no ledger entry matches.
var ErrNotFound = errors.New("state: no such ledger entry")

// First is the first of the entries a backend's query found, or
// ErrNotFound when it found none; err, when set, is returned as it is.
func First(es []Entry, err error) (Entry, error) {
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 {
		return Entry{}, ErrNotFound
	}
	return es[0], nil
}

// ErrNotPending reports that an approval can no longer be decided: it was
// already claimed, rejected or expired, or its expiry has passed.
var ErrNotPending = errors.New("state: approval is not pending")

// ErrInvalidTransition reports a state change the ledger does not allow, for
// example finishing an order that is not being sent.
var ErrInvalidTransition = errors.New("state: invalid ledger transition")

// Ledger is the idempotency ledger of replenishment orders and their staged
// approvals. Every method is atomic, also between processes sharing the
// same store.
type Ledger interface {
	// Reserve inserts e if no entry holds its IdempotencyKey, or takes over a
	// StateRetryable entry of the same request (same RequestHash). It returns
	// the stored entry and true when it did, or the existing entry and false
	// when the key was already taken, even by another process. The caller
	// compares RequestHash to tell a replay from a reused key. A StateSending
	// entry is refused with an *InFlightError while the same request is
	// sending or unknown under another key.
	Reserve(ctx context.Context, e Entry) (Entry, bool, error)
	// Finish records the verdict on an order being sent: state is
	// StateRaised (with orderID), StateFailed, StateRetryable or
	// StateUnknown (with the error). Any entry not in StateSending is
	// refused with ErrInvalidTransition.
	Finish(ctx context.Context, key string, state EntryState, orderID, errCode, errMsg string, now time.Time) (Entry, error)
	// Apply moves the entry under key by one event of the transition table
	// (machine.go), as one conditional update. Recording an order id that
	// another entry of the same StoreLink holds is refused with an
	// *OrderIDTakenError and changes nothing (Finish alike), also when two
	// processes race to record it.
	Apply(ctx context.Context, key string, ev Event, ch Change, now time.Time) (Entry, error)
	// Get returns the entry reserved under key.
	Get(ctx context.Context, key string) (Entry, bool, error)
	// ByOrderID returns the entry that raised StoreLink order orderID.
	ByOrderID(ctx context.Context, orderID string) (Entry, bool, error)
	// ByApprovalID returns the entry staged under approvalID.
	ByApprovalID(ctx context.Context, approvalID string) (Entry, bool, error)
	// Recent lists the entries for a store and SKU created at or after
	// since, newest first, for the duplicate-open-order warning.
	Recent(ctx context.Context, storeID, sku string, since time.Time) ([]Entry, error)
	// Pending lists the entries awaiting approval that have not expired at
	// now, oldest first.
	Pending(ctx context.Context, now time.Time) ([]Entry, error)
	// Staged lists every entry that was ever staged for approval, whatever
	// its state now, oldest first.
	Staged(ctx context.Context) ([]Entry, error)
	// Claim moves a pending, unexpired entry to StateSending and records
	// decidedBy. Of concurrent callers exactly one wins; the others get
	// ErrNotPending. An unknown approvalID gives ErrNotFound, and the same
	// request sending or unknown under another key an *InFlightError.
	Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error)
	// Reject moves a pending, unexpired entry to StateRejected and records
	// decidedBy, with the same errors as Claim.
	Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error)
	// Expire moves every pending entry whose approval has run out at now to
	// StateExpired and returns how many it moved.
	Expire(ctx context.Context, now time.Time) (int, error)
}

// RequestHash returns the fingerprint of an order request that Entry
// records. The reason is compared in its folded form (FoldReason), the same
// form the derived idempotency key uses, so two spellings that name the same
// request never count as two. Each field is length-prefixed so that no two
// different requests can be spelt into the same byte stream.
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

// checkNew rejects entries Reserve must not store, so the ledger never holds
// an order it could not later finish or decide.
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
