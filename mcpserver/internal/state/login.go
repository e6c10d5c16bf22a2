package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// LoginAttempts is the approvals console's login rate limit, kept in the
// state database so that every replica sharing it grants one set of
// attempts, not one each. Admitting an attempt and counting it are one
// step: an admitted attempt holds a slot under its name key and its
// address key until it is settled, and a key is refused while its recent
// failures plus the attempts in flight reach the limit. So a burst of
// concurrent logins for one name is admitted only up to the limit, however
// many replicas it is spread over, and the slow secret check runs at most
// that many times per window.
type LoginAttempts interface {
	// AdmitLogin reserves a slot for one login attempt, or refuses it and
	// says when a slot opens again. The rows of the window that have run
	// out are swept in the same transaction.
	AdmitLogin(ctx context.Context, r LoginRequest) (LoginAdmission, error)
	// SettleLogin ends an admitted attempt: LoginFailed keeps it as a
	// failure for the window; LoginSucceeded releases the slot and forgets
	// the name's failures; LoginAborted (the check could not be made)
	// releases the slot only.
	SettleLogin(ctx context.Context, slot LoginSlot, outcome LoginOutcome, now time.Time) error
}

// LoginRequest is one login attempt presented for admission.
type LoginRequest struct {
	// Name is the approver name as typed; Addr the client's address. Only
	// hashes of their keys are stored (LoginNameKey, LoginAddrKey): people
	// type their secret into the name field often enough.
	Name, Addr string
	Now        time.Time
	// Limit is how many failures plus attempts in flight a key may hold
	// within Window.
	Limit  int
	Window time.Duration
	// Hold is how long an attempt in flight holds its slot if it is never
	// settled (its process crashed); then the slot lapses by itself.
	Hold time.Duration
}

// LoginAdmission is AdmitLogin's verdict.
type LoginAdmission struct {
	// Admitted reports a slot reserved; Slot is it.
	Admitted bool
	Slot     LoginSlot
	// RetryAt is, for a refused attempt, when a slot opens again for every
	// key that refused it.
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

// LoginNameKey is the key of a typed name in the login limit: a hash of
// ApproverNameKey, the register's own key, so that every spelling the
// register takes for one name (case, NFC or NFD) shares one set of
// attempts.
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

// LoginRetryAt returns when a key holding a slot for each of expiries (the
// moments its failures leave the window and its attempts in flight lapse,
// ascending) drops below limit, or the zero time when it already is below.
func LoginRetryAt(expiries []time.Time, limit int) time.Time {
	if len(expiries) < limit {
		return time.Time{}
	}
	return expiries[len(expiries)-limit]
}

// LoginTx is one write transaction of a backend as AdmitLoginTx and
// SettleLoginTx use it; each method is a statement or two of the backend's
// own SQL.
type LoginTx interface {
	// Sweep readies the keys of slot for counting: it deletes what has run
	// out at r.Now and takes whatever locks keep another process from
	// counting the same keys before the transaction ends.
	Sweep(ctx context.Context, r LoginRequest, slot LoginSlot) error
	// Expiries returns, ascending, when each live row of key, a name key
	// (byName) or an address key, runs out.
	Expiries(ctx context.Context, byName bool, key string, now time.Time) ([]time.Time, error)
	// Admit inserts an attempt in flight for slot, holding it until
	// expires, and returns its id.
	Admit(ctx context.Context, slot LoginSlot, expires time.Time) (int64, error)
	// Fail turns the attempt in flight of slot into a failure counted
	// until until, and reports false when the slot is gone (it lapsed and
	// was swept).
	Fail(ctx context.Context, slot LoginSlot, until time.Time) (bool, error)
	// AddFailure records a failure of slot's keys counted until until.
	AddFailure(ctx context.Context, slot LoginSlot, until time.Time) error
	// Succeed deletes slot and every failure of its name.
	Succeed(ctx context.Context, slot LoginSlot, now time.Time) error
	// Abort deletes slot while it is still in flight.
	Abort(ctx context.Context, slot LoginSlot) error
}

// NewLoginSlot checks r for LoginAttempts.AdmitLogin and returns the slot
// it would take.
func NewLoginSlot(r LoginRequest) (LoginSlot, error) {
	if err := CheckLoginRequest(r); err != nil {
		return LoginSlot{}, err
	}
	return LoginSlot{NameKey: LoginNameKey(r.Name), AddrKey: LoginAddrKey(r.Addr), Window: r.Window}, nil
}

// AdmitLoginTx is LoginAttempts.AdmitLogin inside tx, for the slot
// NewLoginSlot returned: the keys are swept and counted, and the attempt
// admitted unless either key has reached the limit.
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

// SettleLoginTx is LoginAttempts.SettleLogin inside tx. A failure whose
// slot has lapsed and been swept meanwhile is recorded all the same.
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
