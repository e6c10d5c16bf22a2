// Package approver decides who may approve a staged order: it makes the
// one-time secrets of named approvers, keeps only a slow salted verifier of
// each in the register (state.Approvers), and checks a name and secret,
// and an approver's store scope, against it.
//
// It does no HTTP, MCP or logging. Its errors never tell an unknown name
// from a wrong secret, and both cost the same hashing time.
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

// ErrDenied is the one answer to an unknown name, a wrong secret, an empty
// one or an unreadable stored verifier, so that nobody can learn from it
// which names exist.
var ErrDenied = errors.New("approver name or secret not recognised")

// ErrRevoked reports an approver whose secret matched but who has been
// revoked (or revoked and added again with a new secret, for a login made
// with the old one). It is given only to someone who knows the secret.
var ErrRevoked = errors.New("approver revoked")

// ErrOutOfScope reports an approver whose secret matched but whose store
// list does not hold the order's store.
var ErrOutOfScope = errors.New("approver not allowed for this store")

// ErrSecretInvalid reports a secret an operator chose that cannot be used.
var ErrSecretInvalid = errors.New("invalid approver secret")

// The bounds of a secret an operator chooses (a generated one is 43
// characters). The minimum keeps guessable words out; the maximum bounds
// what one verification hashes.
const (
	MinSecretLen = 16
	MaxSecretLen = 1024
)

// secretBytes is the entropy of a generated secret.
const secretBytes = 32

// NewSecret returns a fresh secret: 32 random bytes in unpadded base64url,
// 43 characters that survive a copy from a terminal and contain no "$".
// It is shown once and never stored.
func NewSecret() string {
	b := make([]byte, secretBytes)
	// crypto/rand.Read never returns an error; it aborts the program
	// instead should the system's generator fail.
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckSecret reports why secret cannot be an approver's secret, or nil: it
// has MinSecretLen to MaxSecretLen characters, is valid UTF-8 and holds no
// control character (so a line break pasted with it is not part of it).
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

// SameName reports whether two names denote one person by the register's
// rule (state.ApproverNameKey): case and Unicode form aside. It is how an
// approver is told apart from the requester of an order.
func SameName(a, b string) bool {
	return state.ApproverNameKey(a) == state.ApproverNameKey(b)
}

// Register is the part of the state store the verifier uses.
type Register interface {
	AddApprover(ctx context.Context, a state.Approver) (state.Approver, error)
	GetApprover(ctx context.Context, name string) (state.Approver, bool, error)
}

// DefaultConcurrency is how many verifications hash at once by default:
// each holds Params.Memory, so a burst of logins queues instead of
// exhausting the machine's memory.
const DefaultConcurrency = 2

// Verifier adds approvers and checks their secrets. It is safe for
// concurrent use.
type Verifier struct {
	reg    Register
	params Params
	// sem admits that many hashing calls at once.
	sem chan struct{}
	// derive is argon2.IDKey; tests count its calls.
	derive func(secret, salt []byte, p Params, keyLen uint32) []byte

	dummyOnce sync.Once
	// dummy is the verifier an unknown name is checked against, made with
	// params on first use, so that it costs what a real one costs.
	dummy verifier
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithParams sets the cost of the verifiers Add makes and of the dummy an
// unknown name is checked against. Tests use a cheap set; production keeps
// DefaultParams.
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

// Add records a new approver named name, limited to stores (nil for every
// store), whose secret is secret, checked by CheckSecret. Only the
// verifier is stored. The caller checks that stores belong to the
// deployment's keyring; the register checks their form and the name
// (state.ErrApproverInvalid, state.ErrApproverExists).
func (v *Verifier) Add(ctx context.Context, name string, stores []string, secret string, now time.Time) (state.Approver, error) {
	if err := CheckSecret(secret); err != nil {
		return state.Approver{}, err
	}
	// The name and stores are checked before the slow hash, so a typo is
	// refused at once.
	if _, err := state.CheckNewApprover(state.Approver{Name: name, Stores: stores, Verifier: "$", CreatedAt: now}); err != nil {
		return state.Approver{}, err
	}
	enc, err := v.hash(ctx, secret)
	if err != nil {
		return state.Approver{}, err
	}
	return v.reg.AddApprover(ctx, state.Approver{Name: name, Stores: stores, Verifier: enc, CreatedAt: now})
}

// Verify checks that name and secret belong to an active approver who may
// decide orders of store storeID, and returns the register's record, whose
// Name (the registered spelling) is what a decision records. The errors:
// ErrDenied for an unknown name or a wrong secret, alike in text and in
// hashing time; ErrRevoked and ErrOutOfScope only once the secret matched;
// anything else is the register failing. storeID must not be empty.
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

// Authenticate checks name and secret as Verify does, without a store: a
// login. Each decision after it goes through Authorize.
func (v *Verifier) Authenticate(ctx context.Context, name, secret string) (state.Approver, error) {
	v.dummyOnce.Do(func() { v.dummy = newVerifier(v.params, randomSalt(), v.derive, NewSecret()) })
	var a state.Approver
	found := false
	// A name no register could hold is looked up nowhere, but hashes all
	// the same.
	if len(name) <= 4*state.MaxApproverNameLen {
		var err error
		if a, found, err = v.reg.GetApprover(ctx, name); err != nil {
			return state.Approver{}, err
		}
	}
	stored, perr := parseVerifier(a.Verifier)
	if !found || perr != nil {
		// The same work as a real check, against a verifier nobody holds
		// the secret of, and the same answer.
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

// Authorize re-reads the register for an approver who authenticated
// earlier (a console session) and checks that the same record is still
// active and covers storeID. A record revoked since, or replaced by a new
// one of the same name, gives ErrRevoked.
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

// check derives secret's hash under stored's salt and parameters and
// compares it with stored's in constant time.
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
