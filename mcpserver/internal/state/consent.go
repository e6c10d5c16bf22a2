package state

import (
	"context"
	"errors"
	"time"
)

// ConsentNonces remembers the single-use nonces of host consent
// (WRITE_APPROVAL=host): each sealed question the server hands a host
// carries one, and the answer to it is honoured only the first time the
// nonce is presented, on any replica sharing the state database.
type ConsentNonces interface {
	// UseConsentNonce records nonce as used and reports true, or reports
	// false when it was recorded before (a replay). expiresAt is when the
	// sealed question lapses by itself; a nonce is kept at least until
	// then, and nonces lapsed before now may be forgotten, since their
	// question is refused as expired anyway.
	UseConsentNonce(ctx context.Context, nonce string, expiresAt, now time.Time) (bool, error)
}

// ErrBadNonce reports a nonce UseConsentNonce will not record.
var ErrBadNonce = errors.New("state: consent nonce must be 16 to 64 characters")

// CheckConsentNonce reports why a nonce must not be recorded, or nil.
func CheckConsentNonce(nonce string, expiresAt time.Time) error {
	if len(nonce) < 16 || len(nonce) > 64 || expiresAt.IsZero() {
		return ErrBadNonce
	}
	return nil
}
