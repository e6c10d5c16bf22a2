package replenish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/approver"
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

// ErrDenied is the answer to every person the Verifier does not accept.
// Its own text is the one for an unknown name and for a wrong secret
// alike, so that nothing tells which names exist; a revoked or out-of-scope
// approver, who proved the secret, gets a text of their own that still
// says nothing about the order (errors.Is(err, ErrDenied) holds for both).
var ErrDenied = errors.New("approval denied: the approver name or secret is not recognised; nothing was changed")

// denied is an ErrDenied with a text for someone who knows the secret.
type denied struct{ msg string }

func (d *denied) Error() string        { return d.msg }
func (d *denied) Is(target error) bool { return target == ErrDenied }

// Named verifies named approvers against the state database's register
// (package approver): the approver's secret, that the approver is active,
// and that their store scope holds the order's store. The name a decision
// records is the register's spelling, not what the person typed.
type Named struct {
	Approvers *approver.Verifier
}

// Verify implements Verifier. With no store (the approval id named no
// entry) only the name and secret are checked, so a stranger learns
// nothing from a made-up id.
func (n Named) Verify(ctx context.Context, name, secret, storeID string) (Approver, error) {
	if n.Approvers == nil {
		return Approver{}, ErrDenied
	}
	rec, err := n.authenticate(ctx, name, secret, storeID)
	switch {
	case err == nil:
		return Approver{Name: rec}, nil
	case errors.Is(err, approver.ErrDenied):
		return Approver{}, ErrDenied
	case errors.Is(err, approver.ErrRevoked):
		return Approver{}, &denied{msg: fmt.Sprintf("approval denied: %s is no longer an active approver (revoked); nothing was changed", strings.TrimSpace(name))}
	case errors.Is(err, approver.ErrOutOfScope):
		// The store is not named: the order is not this person's to see.
		return Approver{}, &denied{msg: fmt.Sprintf("approval denied: %s may not decide this order (it is outside the stores they approve for); nothing was changed", strings.TrimSpace(name))}
	}
	return Approver{}, err
}

func (n Named) authenticate(ctx context.Context, name, secret, storeID string) (string, error) {
	if storeID == "" {
		a, err := n.Approvers.Authenticate(ctx, name, secret)
		return a.Name, err
	}
	a, err := n.Approvers.Verify(ctx, name, secret, storeID)
	return a.Name, err
}

// Unverified accepts every name: for a ledger whose owner is the person in
// charge (no approval mode), where resolving an unknown outcome asks for no
// credential.
type Unverified struct{}

// Verify implements Verifier.
func (Unverified) Verify(_ context.Context, name, _, _ string) (Approver, error) {
	return Approver{Name: name}, nil
}

// requesterToken is the authenticated name of an order's requester, as the
// HTTP transport records it: the bearer token label of "token:LABEL", or the
// access token subject of "oauth:SUB", then " (client)" and "/session". It
// is "" for a requester no token names (stdio, where the client's name is
// its own claim). Neither labels nor subjects hold a space or a slash.
func requesterToken(requestedBy string) string {
	name, ok := strings.CutPrefix(requestedBy, "token:")
	if !ok {
		if name, ok = strings.CutPrefix(requestedBy, "oauth:"); !ok {
			return ""
		}
	}
	if i := strings.IndexAny(name, " /"); i >= 0 {
		name = name[:i]
	}
	return name
}

// requesterKind names what authenticated a requester requesterToken names:
// a token of the token file, or an identity provider's access token.
func requesterKind(requestedBy string) string {
	if strings.HasPrefix(requestedBy, "oauth:") {
		return "OAuth subject"
	}
	return "token"
}
