package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// LoginAttempts is the console's login rate limit, kept in the state
// database so all replicas share one budget. An admitted attempt holds a
// slot under its name and address keys until settled; a key is refused
// while failures plus attempts in flight reach the limit.
type LoginAttempts interface {
	// AdmitLogin reserves a slot, or refuses and says when one opens.
	AdmitLogin(ctx context.Context, r LoginRequest) (LoginAdmission, error)
	// SettleLogin ends an attempt: LoginFailed counts a failure,
	// LoginSucceeded releases the slot and clears the name's failures,
	// LoginAborted releases the slot only.
	SettleLogin(ctx context.Context, slot LoginSlot, outcome LoginOutcome, now time.Time) error
}

// LoginRequest is one login attempt presented for admission.
type LoginRequest struct {
	// Name is the approver name as typed; Addr the client's address. Only
	// hashes are stored (people type secrets into the name field).
	Name, Addr string
	Now        time.Time
	// Limit is how many failures plus attempts in flight a key may hold.
	Limit  int
	Window time.Duration
	// Hold is how long an unsettled attempt holds its slot.
	Hold time.Duration
}

// LoginAdmission is AdmitLogin's verdict.
type LoginAdmission struct {
	// Admitted reports a slot reserved; Slot is it.
	Admitted bool
	Slot     LoginSlot
	// RetryAt is, when refused, when a slot opens for every refusing key.
	RetryAt time.Time
}

// LoginSlot is an admitted attempt, to be settled.
type LoginSlot struct {
	ID               int64
	NameKey, AddrKey string
	// Window is how long a failure counts.
	Window time.Duration
}

// LoginOutcome is how an admitted attempt ended.
type LoginOutcome int

// The outcomes of a login attempt.
const (
	LoginFailed LoginOutcome = iota + 1
	LoginSucceeded
	LoginAborted
)

// ErrBadLoginRequest reports a LoginRequest without a limit, window or hold.
var ErrBadLoginRequest = errors.New("state: a login attempt needs a positive limit, window and hold")

// LoginNameKey is the limit's key for a typed name: a hash of
// ApproverNameKey, so all spellings of one name share a budget.
func LoginNameKey(name string) string { return loginKey("name", ApproverNameKey(name)) }

// LoginAddrKey is the key of a client address in the login limit.
func LoginAddrKey(addr string) string { return loginKey("addr", addr) }

func loginKey(kind, v string) string {
	sum := sha256.Sum256([]byte("storelink console login " + kind + "\x00" + v))
	return kind + ":" + hex.EncodeToString(sum[:])
}

// CheckLoginRequest reports why r cannot be admitted, or nil.
func CheckLoginRequest(r LoginRequest) error {
	if r.Limit <= 0 || r.Window <= 0 || r.Hold <= 0 || r.Now.IsZero() {
		return ErrBadLoginRequest
	}
	return nil
}

// LoginRetryAt returns when a key with the given ascending expiries drops
// below limit; zero if it already is.
func LoginRetryAt(expiries []time.Time, limit int) time.Time {
	if len(expiries) < limit {
		return time.Time{}
	}
	return expiries[len(expiries)-limit]
}

// LoginTx is one backend write transaction for AdmitLoginTx and
// SettleLoginTx.
type LoginTx interface {
	// Sweep deletes rows expired at r.Now and locks slot's keys.
	Sweep(ctx context.Context, r LoginRequest, slot LoginSlot) error
	// Expiries returns when each live row of key runs out, ascending.
	Expiries(ctx context.Context, byName bool, key string, now time.Time) ([]time.Time, error)
	// Admit inserts an attempt for slot held until expires; returns its id.
	Admit(ctx context.Context, slot LoginSlot, expires time.Time) (int64, error)
	// Fail turns slot's attempt into a failure counted until until; false
	// when the slot was swept.
	Fail(ctx context.Context, slot LoginSlot, until time.Time) (bool, error)
	// AddFailure records a failure of slot's keys counted until until.
	AddFailure(ctx context.Context, slot LoginSlot, until time.Time) error
	// Succeed deletes slot and every failure of its name.
	Succeed(ctx context.Context, slot LoginSlot, now time.Time) error
	// Abort deletes slot while it is still in flight.
	Abort(ctx context.Context, slot LoginSlot) error
}

// NewLoginSlot checks r and returns the slot it would take.
func NewLoginSlot(r LoginRequest) (LoginSlot, error) {
	if err := CheckLoginRequest(r); err != nil {
		return LoginSlot{}, err
	}
	return LoginSlot{NameKey: LoginNameKey(r.Name), AddrKey: LoginAddrKey(r.Addr), Window: r.Window}, nil
}

// AdmitLoginTx is AdmitLogin inside tx: sweep, count, admit unless a key
// reached the limit.
func AdmitLoginTx(ctx context.Context, tx LoginTx, r LoginRequest, slot LoginSlot) (LoginAdmission, error) {
	if err := tx.Sweep(ctx, r, slot); err != nil {
		return LoginAdmission{}, err
	}
	var retry time.Time
	for _, q := range []struct {
		byName bool
		key    string
	}{{true, slot.NameKey}, {false, slot.AddrKey}} {
		exp, err := tx.Expiries(ctx, q.byName, q.key, r.Now)
		if err != nil {
			return LoginAdmission{}, err
		}
		if t := LoginRetryAt(exp, r.Limit); t.After(retry) {
			retry = t
		}
	}
	if !retry.IsZero() {
		return LoginAdmission{RetryAt: retry}, nil
	}
	id, err := tx.Admit(ctx, slot, r.Now.Add(r.Hold))
	slot.ID = id
	return LoginAdmission{Admitted: true, Slot: slot}, err
}

// SettleLoginTx is SettleLogin inside tx; a failure whose slot was swept is
// still recorded.
func SettleLoginTx(ctx context.Context, tx LoginTx, slot LoginSlot, outcome LoginOutcome, now time.Time) error {
	switch outcome {
	case LoginFailed:
		until := now.Add(slot.Window)
		if ok, err := tx.Fail(ctx, slot, until); err != nil || ok {
			return err
		}
		return tx.AddFailure(ctx, slot, until)
	case LoginSucceeded:
		return tx.Succeed(ctx, slot, now)
	case LoginAborted:
		return tx.Abort(ctx, slot)
	}
	return fmt.Errorf("unknown outcome %d", outcome)
}
