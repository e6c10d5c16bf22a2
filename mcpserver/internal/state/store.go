package state

import "context"

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
