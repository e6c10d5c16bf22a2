package state

import (
	"context"
	"errors"
	"time"
)

// ConsoleSessions keeps console sessions in the state database, shared by
// replicas. Only the SHA-256 of a session id is stored. Reading a session
// joins its approver record, so a revoked or rotated approver's session
// reads as revoked.
type ConsoleSessions interface {
	// CreateConsoleSession stores s, sweeping sessions expired at now.
	CreateConsoleSession(ctx context.Context, s ConsoleSession, now time.Time) error
	// GetConsoleSession returns the session under keyHash with its
	// approver's current name and revocation, or false. It checks no
	// expiry.
	GetConsoleSession(ctx context.Context, keyHash string) (ConsoleSession, bool, error)
	// TouchConsoleSession records activity; a missing session is no error.
	TouchConsoleSession(ctx context.Context, keyHash string, lastSeen, idleUntil time.Time) error
	// DeleteConsoleSession removes the session; a missing one is no error.
	DeleteConsoleSession(ctx context.Context, keyHash string) error
}

// ConsoleSession is one console login as the state database keeps it.
type ConsoleSession struct {
	// KeyHash is the hex SHA-256 of the session id.
	KeyHash string
	// ApproverID is the register's record the login was made with.
	ApproverID int64
	// Approver and Revoked are read from the approver record (Get only).
	Approver string
	Revoked  bool
	// CreatedAt and LastSeen are login and last activity; IdleUntil and
	// ExpiresAt are the idle and absolute ends.
	CreatedAt, LastSeen, IdleUntil, ExpiresAt time.Time
}

// ErrBadSession reports a session the store will not keep.
var ErrBadSession = errors.New("state: a console session needs a SHA-256 key, an approver and its times")

// CheckConsoleSession reports why s cannot be stored, or nil.
func CheckConsoleSession(s ConsoleSession) error {
	if !isSHA256Hex(s.KeyHash) || s.ApproverID <= 0 || s.CreatedAt.IsZero() || s.LastSeen.IsZero() || s.IdleUntil.IsZero() || s.ExpiresAt.IsZero() {
		return ErrBadSession
	}
	return nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
