// Package approver makes approvers' one-time secrets, stores only a slow
// salted verifier in the register (state.Approvers), and checks name,
// secret and store scope. It does no HTTP, MCP or logging, and never tells
// an unknown name from a wrong secret, in text or timing.
package approver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// ErrDenied is the one answer to an unknown name, a wrong or empty secret,
// or an unreadable stored verifier.
var ErrDenied = errors.New("approver name or secret not recognised")

// ErrRevoked reports a matching secret of a revoked (or replaced) approver.
var ErrRevoked = errors.New("approver revoked")

// ErrOutOfScope reports a matching secret whose store list lacks the store.
var ErrOutOfScope = errors.New("approver not allowed for this store")

// ErrSecretInvalid reports a secret an operator chose that cannot be used.
var ErrSecretInvalid = errors.New("invalid approver secret")

// The bounds of an operator-chosen secret (a generated one is 43
// characters).
const (
	MinSecretLen = 16
	MaxSecretLen = 1024
)

// secretBytes is the entropy of a generated secret.
const secretBytes = 32

// NewSecret returns a fresh secret: 32 random bytes in unpadded base64url,
// with no "$". It is shown once and never stored.
func NewSecret() string {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never returns an error.
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckSecret reports why secret cannot be used, or nil: MinSecretLen to
// MaxSecretLen characters of valid UTF-8 without control characters.
func CheckSecret(secret string) error {
	if !utf8.ValidString(secret) {
		return fmt.Errorf("%w: it is not valid UTF-8", ErrSecretInvalid)
	}
	if n := utf8.RuneCountInString(secret); n < MinSecretLen {
		return fmt.Errorf("%w: it has %d characters, at least %d are needed; omit --secret-stdin to have one generated", ErrSecretInvalid, n, MinSecretLen)
	}
	if len(secret) > MaxSecretLen {
		return fmt.Errorf("%w: it is longer than %d bytes", ErrSecretInvalid, MaxSecretLen)
	}
	if strings.ContainsFunc(secret, unicode.IsControl) {
		return fmt.Errorf("%w: it holds a control character (a tab or line break?)", ErrSecretInvalid)
	}
	return nil
}

// SameName reports whether two names denote one person
// (state.ApproverNameKey); used to tell an approver from a requester.
func SameName(a, b string) bool {
	return state.ApproverNameKey(a) == state.ApproverNameKey(b)
}

// Register is the part of the state store the verifier uses.
type Register interface {
	AddApprover(ctx context.Context, a state.Approver) (state.Approver, error)
	GetApprover(ctx context.Context, name string) (state.Approver, bool, error)
}

// DefaultConcurrency is how many verifications hash at once; each holds
// Params.Memory.
const DefaultConcurrency = 2

// Verifier adds approvers and checks their secrets; safe for concurrent use.
type Verifier struct {
	reg    Register
	params Params
	// sem admits that many hashing calls at once.
	sem chan struct{}
	// derive is argon2.IDKey; tests count its calls.
	derive func(secret, salt []byte, p Params, keyLen uint32) []byte

	dummyOnce sync.Once
	// dummy is checked for unknown names, so they cost what a real one does.
	dummy verifier
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithParams sets the hashing cost of new verifiers and the dummy.
func WithParams(p Params) Option { return func(v *Verifier) { v.params = p } }

// WithConcurrency sets how many verifications hash at once (at least one).
func WithConcurrency(n int) Option {
	return func(v *Verifier) { v.sem = make(chan struct{}, max(n, 1)) }
}

// New returns a Verifier over the register reg.
func New(reg Register, opts ...Option) *Verifier {
	v := &Verifier{reg: reg, params: DefaultParams, derive: idKey}
	for _, o := range opts {
		o(v)
	}
	if v.sem == nil {
		v.sem = make(chan struct{}, DefaultConcurrency)
	}
	return v
}

func idKey(secret, salt []byte, p Params, keyLen uint32) []byte {
	return argon2.IDKey(secret, salt, p.Time, p.Memory, p.Threads, keyLen)
}

// Add records approver name with secret (checked by CheckSecret), limited
// to stores (nil: all). Only the verifier is stored; the caller checks the
// stores against the keyring.
func (v *Verifier) Add(ctx context.Context, name string, stores []string, secret string, now time.Time) (state.Approver, error) {
	if err := CheckSecret(secret); err != nil {
		return state.Approver{}, err
	}
	// Check name and stores before the slow hash.
	if _, err := state.CheckNewApprover(state.Approver{Name: name, Stores: stores, Verifier: "$", CreatedAt: now}); err != nil {
		return state.Approver{}, err
	}
	enc, err := v.hash(ctx, secret)
	if err != nil {
		return state.Approver{}, err
	}
	return v.reg.AddApprover(ctx, state.Approver{Name: name, Stores: stores, Verifier: enc, CreatedAt: now})
}

// Verify checks that name and secret belong to an active approver covering
// storeID (not empty) and returns the record. ErrDenied for an unknown name
// or wrong secret; ErrRevoked and ErrOutOfScope only after a match; other
// errors are the register's.
func (v *Verifier) Verify(ctx context.Context, name, secret, storeID string) (state.Approver, error) {
	if storeID == "" {
		return state.Approver{}, errors.New("approver: Verify needs the order's store; Authenticate checks a login without one")
	}
	a, err := v.Authenticate(ctx, name, secret)
	if err != nil {
		return state.Approver{}, err
	}
	return a, scope(a, storeID)
}

// Authenticate is Verify without a store: a login.
func (v *Verifier) Authenticate(ctx context.Context, name, secret string) (state.Approver, error) {
	v.dummyOnce.Do(func() { v.dummy = newVerifier(v.params, randomSalt(), v.derive, NewSecret()) })
	var a state.Approver
	found := false
	// An impossible name is looked up nowhere but still hashed.
	if len(name) <= 4*state.MaxApproverNameLen {
		var err error
		if a, found, err = v.reg.GetApprover(ctx, name); err != nil {
			return state.Approver{}, err
		}
	}
	stored, perr := parseVerifier(a.Verifier)
	if !found || perr != nil {
		// Same work and answer as a real check.
		if _, err := v.check(ctx, v.dummy, secret); err != nil {
			return state.Approver{}, err
		}
		return state.Approver{}, ErrDenied
	}
	ok, err := v.check(ctx, stored, secret)
	if err != nil {
		return state.Approver{}, err
	}
	if !ok || secret == "" {
		return state.Approver{}, ErrDenied
	}
	if a.Revoked() {
		return state.Approver{}, fmt.Errorf("%w: %s was revoked at %s", ErrRevoked, a.Name, a.RevokedAt.Format(time.RFC3339))
	}
	return a, nil
}

// Authorize re-reads the register for an authenticated approver and checks
// the same record is active and covers storeID; else ErrRevoked.
func (v *Verifier) Authorize(ctx context.Context, a state.Approver, storeID string) (state.Approver, error) {
	cur, found, err := v.reg.GetApprover(ctx, a.Name)
	if err != nil {
		return state.Approver{}, err
	}
	if !found || cur.ID != a.ID || cur.Revoked() {
		return state.Approver{}, fmt.Errorf("%w: %s is no longer an active approver with this login; log in again", ErrRevoked, a.Name)
	}
	if storeID == "" {
		return state.Approver{}, errors.New("approver: Authorize needs the order's store")
	}
	return cur, scope(cur, storeID)
}

func scope(a state.Approver, storeID string) error {
	if a.Covers(storeID) {
		return nil
	}
	return fmt.Errorf("%w: %s may decide orders of store(s) %s only, not of store %s", ErrOutOfScope, a.Name, strings.Join(a.Stores, ", "), storeID)
}

// hash makes the encoded verifier of secret with a fresh salt.
func (v *Verifier) hash(ctx context.Context, secret string) (string, error) {
	release, err := v.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return newVerifier(v.params, randomSalt(), v.derive, secret).String(), nil
}

// check compares secret's hash with stored's in constant time.
func (v *Verifier) check(ctx context.Context, stored verifier, secret string) (bool, error) {
	release, err := v.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	got := v.derive([]byte(secret), stored.salt, stored.params, uint32(len(stored.hash)))
	return subtle.ConstantTimeCompare(got, stored.hash) == 1, nil
}

func (v *Verifier) acquire(ctx context.Context) (release func(), err error) {
	select {
	case v.sem <- struct{}{}:
		return func() { <-v.sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("approver: waiting to verify: %w", ctx.Err())
	}
}

func randomSalt() []byte {
	b := make([]byte, saltLen)
	_, _ = rand.Read(b)
	return b
}
