package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
