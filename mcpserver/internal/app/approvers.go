package app

import (
	"context"
	"time"

	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// MaxSecretLen is the longest approver secret accepted.
const MaxSecretLen = approver.MaxSecretLen

// ErrSecretInvalid wraps every refusal of a secret by CheckSecret or
// AddApprover.
var ErrSecretInvalid = approver.ErrSecretInvalid

// CheckSecret refuses a secret an approver cannot have.
func CheckSecret(secret string) error { return approver.CheckSecret(secret) }

// AddApprover registers an approver for the stores of scope (every store
// when empty) with secret, or with a generated secret when secret is "";
// it returns the record and the secret.
func (a *App) AddApprover(ctx context.Context, name string, scope []string, secret string) (state.Approver, string, error) {
	if secret == "" {
		secret = approver.NewSecret()
	}
	rec, err := approver.New(a.db).Add(ctx, name, scope, secret, time.Now())
	return rec, secret, err
}
