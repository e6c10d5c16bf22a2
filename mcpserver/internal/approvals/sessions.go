package approvals

import (
	"context"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Sessions is the console's session store in the state database, shared by
// replicas. It keeps the session id's SHA-256 and the login's approver
// record, so a revoked or rotated approver's session reads as revoked.
type Sessions struct{ DB state.ConsoleSessions }

var _ console.SessionStore = Sessions{}

// Create implements console.SessionStore.
func (s Sessions) Create(ctx context.Context, cs console.Session) error {
	rec, ok := parseLoginRef(cs.Ref)
	if !ok {
		return fmt.Errorf("console session: the login's reference %q names no approver record", cs.Ref)
	}
	return s.DB.CreateConsoleSession(ctx, state.ConsoleSession{KeyHash: cs.Key, ApproverID: rec.ID, CreatedAt: cs.Created,
		LastSeen: cs.LastSeen, IdleUntil: cs.IdleUntil, ExpiresAt: cs.ExpiresAt}, cs.Created)
}

// Get implements console.SessionStore.
func (s Sessions) Get(ctx context.Context, key string) (console.Session, error) {
	got, found, err := s.DB.GetConsoleSession(ctx, key)
	switch {
	case err != nil:
		return console.Session{}, err
	case !found:
		return console.Session{}, console.ErrNoSession
	case got.Revoked:
		return console.Session{}, console.ErrRevoked
	}
	return console.Session{Key: got.KeyHash, Approver: got.Approver, Ref: loginRef(state.Approver{ID: got.ApproverID, Name: got.Approver}),
		Created: got.CreatedAt, LastSeen: got.LastSeen, IdleUntil: got.IdleUntil, ExpiresAt: got.ExpiresAt}, nil
}

// Touch implements console.SessionStore.
func (s Sessions) Touch(ctx context.Context, key string, at, idleUntil time.Time) error {
	return s.DB.TouchConsoleSession(ctx, key, at, idleUntil)
}

// Delete implements console.SessionStore.
func (s Sessions) Delete(ctx context.Context, key string) error {
	return s.DB.DeleteConsoleSession(ctx, key)
}
