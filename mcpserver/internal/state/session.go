package state

import (
	"context"
	"errors"
	"time"
)

// ConsoleSessions keeps the approvals console's sessions in the state
// database, so that a session made at one replica is accepted at every
// other and survives a restart. Only the SHA-256 of a session id is
// stored: whoever reads the database (a backup, a replica's disk) cannot
// present a row as a cookie. A session names the approver record it was
// made for; reading it joins that record, so a revoked approver's session
// reads as revoked, and so does one made before the name was revoked and
// added again (rotation makes a new record).
type ConsoleSessions interface {
	// CreateConsoleSession stores s, in the transaction that sweeps the
	// sessions whose absolute or idle expiry has passed at now.
	CreateConsoleSession(ctx context.Context, s ConsoleSession, now time.Time) error
	// GetConsoleSession returns the session under keyHash with its
	// approver's name and revocation as the register holds them now, and
	// false when there is none. It judges no expiry: the caller does.
	GetConsoleSession(ctx context.Context, keyHash string) (ConsoleSession, bool, error)
	// TouchConsoleSession records activity: lastSeen and the idle deadline
	// it pushes back. A missing session is not an error.
	TouchConsoleSession(ctx context.Context, keyHash string, lastSeen, idleUntil time.Time) error
	// DeleteConsoleSession removes the session; a missing one is not an
	// error.
	DeleteConsoleSession(ctx context.Context, keyHash string) error
}

// ConsoleSession is one console login as the state database keeps it.
type ConsoleSession struct {
	// KeyHash is the hex SHA-256 of the session id (64 lower-case hex
	// digits).
	KeyHash string
	// ApproverID is the register's record the login was made with.
	ApproverID int64
	// Approver and Revoked are read from the approver record (Get only).
	Approver string
	Revoked  bool
	// CreatedAt and LastSeen are the login and the last activity;
	// IdleUntil ends the session if nothing happens before it, ExpiresAt
	// however active it is.
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
