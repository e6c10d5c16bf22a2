package statetest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
)

func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// consoleSessions: a session stored through one handle is read through
// another (another replica, or after a restart) with its approver; touch
// pushes back the idle deadline; a revoked approver's session, and one made
// before a rotation, read as revoked; lapsed sessions are swept when a new
// one is made; a malformed one is refused.
func consoleSessions(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	jana, err := s.AddApprover(ctx, state.Approver{Name: "Jana", Verifier: verifier, CreatedAt: base})
	if err != nil {
		t.Fatal(err)
	}
	want := state.ConsoleSession{KeyHash: sessionKey("one"), ApproverID: jana.ID, CreatedAt: base, LastSeen: base,
		IdleUntil: base.Add(30 * time.Minute), ExpiresAt: base.Add(8 * time.Hour)}
	if err := s.CreateConsoleSession(ctx, want, base); err != nil {
		t.Fatal(err)
	}
	other := reopen()
	got, found, err := other.GetConsoleSession(ctx, want.KeyHash)
	want.Approver = "Jana"
	if err != nil || !found {
		t.Fatalf("get through another handle: %v, %v", found, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	seen := base.Add(10 * time.Minute)
	if err := other.TouchConsoleSession(ctx, want.KeyHash, seen, seen.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	// An older touch arriving late moves nothing back.
	if err := s.TouchConsoleSession(ctx, want.KeyHash, base.Add(time.Minute), base.Add(31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.GetConsoleSession(ctx, want.KeyHash); !got.LastSeen.Equal(seen) || !got.IdleUntil.Equal(seen.Add(30*time.Minute)) {
		t.Errorf("after touches: last seen %v, idle until %v; want %v, %v", got.LastSeen, got.IdleUntil, seen, seen.Add(30*time.Minute))
	}
	// A second session, idle since base: swept when a third is made after
	// its idle deadline; the touched one stays.
	idle := want
	idle.KeyHash = sessionKey("idle")
	if err := other.CreateConsoleSession(ctx, idle, base); err != nil {
		t.Fatal(err)
	}
	third := want
	third.KeyHash, third.CreatedAt, third.LastSeen, third.IdleUntil = sessionKey("three"), seen.Add(time.Minute), seen.Add(time.Minute), seen.Add(31*time.Minute)
	if err := s.CreateConsoleSession(ctx, third, base.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := other.GetConsoleSession(ctx, idle.KeyHash); found {
		t.Error("a session past its idle deadline was not swept")
	}
	if _, found, _ := other.GetConsoleSession(ctx, want.KeyHash); !found {
		t.Error("a live session was swept")
	}
	// Revocation, seen through the join; rotation makes a new record, and
	// the old session stays revoked.
	if _, err := other.RevokeApprover(ctx, "jana", seen); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddApprover(ctx, state.Approver{Name: "Jana", Verifier: verifier + "2", CreatedAt: seen}); err != nil {
		t.Fatal(err)
	}
	if got, found, err := s.GetConsoleSession(ctx, want.KeyHash); err != nil || !found || !got.Revoked || got.ApproverID != jana.ID {
		t.Errorf("after revoke and rotation: %+v, %v, %v; want the old record, revoked", got, found, err)
	}
	if err := s.DeleteConsoleSession(ctx, want.KeyHash); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConsoleSession(ctx, want.KeyHash); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
	if _, found, err := other.GetConsoleSession(ctx, want.KeyHash); err != nil || found {
		t.Errorf("after delete: %v, %v", found, err)
	}
	for _, bad := range []state.ConsoleSession{
		{KeyHash: "one", ApproverID: jana.ID, CreatedAt: base, LastSeen: base, IdleUntil: base, ExpiresAt: base},
		{KeyHash: sessionKey("x"), CreatedAt: base, LastSeen: base, IdleUntil: base, ExpiresAt: base},
		{KeyHash: sessionKey("y"), ApproverID: jana.ID},
	} {
		if err := s.CreateConsoleSession(ctx, bad, base); !errors.Is(err, state.ErrBadSession) {
			t.Errorf("session %+v: err %v, want ErrBadSession", bad, err)
		}
	}
}
