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

// Verifier checks that name with secret may decide about an order of
// storeID ("" when no entry was found). It returns ErrDenied, possibly
// wrapped, for a person it does not accept.
type Verifier interface {
	Verify(ctx context.Context, name, secret, storeID string) (Approver, error)
}

// ErrDenied is the answer to every person the Verifier refuses. Its text is
// the same for an unknown name and a wrong secret.
var ErrDenied = errors.New("approval denied: the approver name or secret is not recognised; nothing was changed")

// denied is an ErrDenied with a text for someone who knows the secret.
type denied struct{ msg string }

func (d *denied) Error() string        { return d.msg }
func (d *denied) Is(target error) bool { return target == ErrDenied }

// Named verifies approvers against the register (package approver):
// secret, active, and store scope. It records the register's spelling.
type Named struct {
	Approvers *approver.Verifier
}

// Verify implements Verifier. With no store, only name and secret are
// checked.
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

// Unverified accepts every name, for a deployment without approval mode.
type Unverified struct{}

// Verify implements Verifier.
func (Unverified) Verify(_ context.Context, name, _, _ string) (Approver, error) {
	return Approver{Name: name}, nil
}

// requesterToken is the authenticated name of a requester ("token:LABEL"
// or "oauth:SUB", with suffixes stripped); "" when no token names it.
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

// requesterKind names what authenticated the requester.
func requesterKind(requestedBy string) string {
	if strings.HasPrefix(requestedBy, "oauth:") {
		return "OAuth subject"
	}
	return "token"
}
