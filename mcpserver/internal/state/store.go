package state

import (
	"context"
	"errors"
)

// Store is everything the server needs from durable state. sqlite.DB and
// postgres.DB satisfy it.
type Store interface {
	Ledger
	AuditLog
	Approvers
	ConsentNonces
	LoginAttempts
	ConsoleSessions
	ConsoleKeys
	Ping(ctx context.Context) error
	Close() error
}

// ErrUnavailable reports that the state database could not be reached or
// lost the connection mid-statement. Nothing the failed call asked for can
// be assumed recorded; a later call may succeed once the database is back.
var ErrUnavailable = errors.New("state: database unavailable")
