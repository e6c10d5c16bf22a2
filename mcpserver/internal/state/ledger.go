package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
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
	// left, or it was turned away before acceptance for a passing reason);
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

const entryColumns = `idempotency_key, store_id, sku, quantity_units, reason, request_hash, state,
	order_id, error_code, error_message, approval_id, approval_expires_at,
	requested_by, decided_by, created_at, updated_at, upstream_id`

// Reserve implements Ledger. e.State must be StateSending or
// StatePendingApproval, and a pending entry needs an ApprovalID and an
// ApprovalExpiresAt. Outcome fields (OrderID, errors, DecidedBy) are not
// stored: a new entry has none. An empty RequestHash is computed, a zero
// CreatedAt becomes the current time, and UpdatedAt starts equal to it.
// Taking over a retryable entry keeps its CreatedAt.
func (db *DB) Reserve(ctx context.Context, e Entry) (Entry, bool, error) {
	if err := checkNew(e); err != nil {
		return Entry{}, false, err
	}
	if e.RequestHash == "" {
		e.RequestHash = RequestHash(e.StoreID, e.SKU, e.QuantityUnits, e.Reason)
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	var approvalID, expires sql.NullString
	if e.State == StatePendingApproval {
		approvalID = sql.NullString{String: e.ApprovalID, Valid: true}
		expires = sql.NullString{String: formatTime(e.ApprovalExpiresAt), Valid: true}
	}
	created := formatTime(e.CreatedAt)

	var got Entry
	var taken bool
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, `WHERE idempotency_key = ?`, e.IdempotencyKey)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		case cur.State != StateRetryable || cur.RequestHash != e.RequestHash:
			got = cur
			return nil
		}
		if e.State == StateSending {
			if err := checkNotInFlight(ctx, tx, e.RequestHash, e.IdempotencyKey); err != nil {
				return err
			}
		}
		if err == nil {
			// The same request again after StoreLink did not take it: the
			// entry is taken over by one conditional update (EventRetry or
			// EventRestage of the transition table).
			ev := EventRetry
			if e.State == StatePendingApproval {
				ev = EventRestage
			}
			if next, ok := Next(cur.State, ev); !ok || next != e.State {
				return fmt.Errorf("%w: %q is %s", ErrInvalidTransition, e.IdempotencyKey, cur.State)
			}
			res, err := tx.ExecContext(ctx, `UPDATE entries
				SET state = ?, order_id = NULL, error_code = '', error_message = '', approval_id = ?, approval_expires_at = ?,
					requested_by = ?, decided_by = '', upstream_id = ?, updated_at = ?
				WHERE idempotency_key = ? AND state = 'retryable'`,
				string(e.State), approvalID, expires, e.RequestedBy, e.UpstreamID, created, e.IdempotencyKey)
			if err != nil {
				return fmt.Errorf("state: reserve %q again: %w", e.IdempotencyKey, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return fmt.Errorf("%w: %q changed state while it was reserved again", ErrInvalidTransition, e.IdempotencyKey)
			}
		} else {
			if _, err := tx.ExecContext(ctx, `INSERT INTO entries (`+entryColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, NULL, '', '', ?, ?, ?, '', ?, ?, ?)`,
				e.IdempotencyKey, e.StoreID, e.SKU, e.QuantityUnits, e.Reason, e.RequestHash, string(e.State),
				approvalID, expires, e.RequestedBy, created, created, e.UpstreamID); err != nil {
				return fmt.Errorf("state: reserve %q: %w", e.IdempotencyKey, err)
			}
		}
		taken = true
		got, err = getOne(ctx, tx, `WHERE idempotency_key = ?`, e.IdempotencyKey)
		return err
	})
	if err != nil {
		return Entry{}, false, err
	}
	return got, taken, nil
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

// Finish implements Ledger. StateRaised requires an orderID.
func (db *DB) Finish(ctx context.Context, key string, state EntryState, orderID, errCode, errMsg string, now time.Time) (Entry, error) {
	ev, err := FinishEvent(key, state, orderID)
	if err != nil {
		return Entry{}, err
	}
	return db.Apply(ctx, key, ev, Change{OrderID: orderID, ErrorCode: errCode, ErrorMessage: errMsg}, now)
}

// Get implements Ledger.
func (db *DB) Get(ctx context.Context, key string) (Entry, bool, error) {
	return found(getOne(ctx, db.sql, `WHERE idempotency_key = ?`, key))
}

// ByOrderID implements Ledger. Should StoreLink ever reuse an order id, the
// most recent entry wins.
func (db *DB) ByOrderID(ctx context.Context, orderID string) (Entry, bool, error) {
	if orderID == "" {
		return Entry{}, false, nil
	}
	return found(getOne(ctx, db.sql, `WHERE order_id = ? ORDER BY id DESC LIMIT 1`, orderID))
}

// ByApprovalID implements Ledger.
func (db *DB) ByApprovalID(ctx context.Context, approvalID string) (Entry, bool, error) {
	if approvalID == "" {
		return Entry{}, false, nil
	}
	return found(getOne(ctx, db.sql, `WHERE approval_id = ?`, approvalID))
}

// Recent implements Ledger. Entries created in the same instant keep their
// reservation order, newest first.
func (db *DB) Recent(ctx context.Context, storeID, sku string, since time.Time) ([]Entry, error) {
	return getMany(ctx, db.sql, `WHERE store_id = ? AND sku = ? AND created_at >= ?
		ORDER BY created_at DESC, id DESC`, storeID, sku, formatTime(since))
}

// Pending implements Ledger.
func (db *DB) Pending(ctx context.Context, now time.Time) ([]Entry, error) {
	return getMany(ctx, db.sql, `WHERE state = 'pending_approval' AND approval_expires_at > ?
		ORDER BY created_at, id`, formatTime(now))
}

// Staged implements Ledger.
func (db *DB) Staged(ctx context.Context) ([]Entry, error) {
	return getMany(ctx, db.sql, `WHERE approval_id IS NOT NULL ORDER BY created_at, id`)
}

// Claim implements Ledger.
func (db *DB) Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, EventClaim, now)
}

// Reject implements Ledger.
func (db *DB) Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, EventReject, now)
}

// decide applies ev to a pending, unexpired approval. The check and the
// update share one write-locked transaction, which is what lets exactly one
// of several racing deciders win.
func (db *DB) decide(ctx context.Context, approvalID, decidedBy string, ev Event, now time.Time) (Entry, error) {
	if approvalID == "" {
		return Entry{}, fmt.Errorf("%w: empty approval id", ErrNotFound)
	}
	var got Entry
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, `WHERE approval_id = ?`, approvalID)
		if err != nil {
			return err
		}
		if err := CheckDecidable(cur, approvalID, now); err != nil {
			return err
		}
		got, err = applyTx(ctx, tx, cur, ev, Change{DecidedBy: decidedBy}, now)
		return err
	})
	return got, err
}

// Expire implements Ledger. An approval expires at the instant its
// ApprovalExpiresAt is reached, matching Pending, Claim and Entry.AsOf.
func (db *DB) Expire(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := db.write(ctx, func(tx *sql.Tx) error {
		due, err := getMany(ctx, tx, `WHERE state = 'pending_approval' AND approval_expires_at <= ?`, formatTime(now))
		if err != nil {
			return err
		}
		for _, e := range due {
			if _, err := applyTx(ctx, tx, e, EventExpire, Change{}, now); err != nil {
				return fmt.Errorf("state: expire approvals: %w", err)
			}
		}
		n = len(due)
		return nil
	})
	return n, err
}

// querier is what reads need from either the pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// getOne returns the single entry selected by where, or ErrNotFound.
func getOne(ctx context.Context, q querier, where string, args ...any) (Entry, error) {
	es, err := getMany(ctx, q, where, args...)
	if err != nil {
		return Entry{}, err
	}
	if len(es) == 0 {
		return Entry{}, ErrNotFound
	}
	return es[0], nil
}

// found turns ErrNotFound into the (zero, false, nil) of the lookup methods.
func found(e Entry, err error) (Entry, bool, error) {
	if errors.Is(err, ErrNotFound) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	return e, true, nil
}

func getMany(ctx context.Context, q querier, where string, args ...any) ([]Entry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+entryColumns+` FROM entries `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("state: read ledger: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: read ledger: %w", err)
	}
	return out, nil
}

func scanEntry(rows *sql.Rows) (Entry, error) {
	var (
		e                        Entry
		state                    string
		order, approval, expires sql.NullString
		created, updated         string
	)
	if err := rows.Scan(&e.IdempotencyKey, &e.StoreID, &e.SKU, &e.QuantityUnits, &e.Reason, &e.RequestHash, &state,
		&order, &e.ErrorCode, &e.ErrorMessage, &approval, &expires,
		&e.RequestedBy, &e.DecidedBy, &created, &updated, &e.UpstreamID); err != nil {
		return Entry{}, fmt.Errorf("state: read ledger entry: %w", err)
	}
	e.State = EntryState(state)
	e.OrderID = order.String
	e.ApprovalID = approval.String
	var err error
	if expires.Valid {
		if e.ApprovalExpiresAt, err = parseTime(expires.String); err != nil {
			return Entry{}, err
		}
	}
	if e.CreatedAt, err = parseTime(created); err != nil {
		return Entry{}, err
	}
	if e.UpdatedAt, err = parseTime(updated); err != nil {
		return Entry{}, err
	}
	return e, nil
}
