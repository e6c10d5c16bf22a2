package replenish

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
)

// Approver is a person whose decision the Verifier accepted.
type Approver struct {
	// Name is who decided, as the ledger and the audit trail record it.
	Name string
}

// Verifier checks that name, presenting secret, may decide about an order
// of storeID ("" when no entry was found, so that a wrong secret is denied
// before anything about the entry is told). It returns ErrDenied, alone or
// wrapped, for a person it does not accept; any other error is a failure to
// check.
type Verifier interface {
	Verify(ctx context.Context, name, secret, storeID string) (Approver, error)
}

// ErrDenied is the one answer to every credential problem, so that nothing
// tells why a credential failed.
var ErrDenied = errors.New("approval denied: the approval credential is missing or does not match; nothing was changed")

// SharedCredential is the verifier of one approval credential that every
// approver presents (APPROVAL_CREDENTIAL in the approving process's
// environment); the name is recorded as given. An empty configured
// credential accepts nobody: approval fails closed.
type SharedCredential struct {
	Credential string
}

// Verify implements Verifier.
func (c SharedCredential) Verify(_ context.Context, name, secret, _ string) (Approver, error) {
	if !credentialMatches(c.Credential, secret) {
		return Approver{}, ErrDenied
	}
	return Approver{Name: name}, nil
}

// credentialMatches compares in constant time; hashing first makes the time
// independent of the lengths too. An empty configured credential never
// matches.
func credentialMatches(configured, presented string) bool {
	if configured == "" || presented == "" {
		return false
	}
	want := sha256.Sum256([]byte(configured))
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

// Unverified accepts every name: for a ledger whose owner is the person in
// charge (no approval mode), where resolving an unknown outcome asks for no
// credential.
type Unverified struct{}

// Verify implements Verifier.
func (Unverified) Verify(_ context.Context, name, _, _ string) (Approver, error) {
	return Approver{Name: name}, nil
}
