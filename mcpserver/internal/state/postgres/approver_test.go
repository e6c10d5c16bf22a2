package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// TestApproverRecordsChangeOnlyByRevoking tampers with the register through
// a plain connection: a record cannot be edited, un-revoked, deleted or
// truncated away, whatever the client.
func TestApproverRecordsChangeOnlyByRevoking(t *testing.T) {
	ctx := testCtx(t)
	url := statetest.PostgresURL(t)
	db := open(t, url)
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if _, err := db.AddApprover(ctx, state.Approver{Name: "Jana", Stores: []string{"47"}, Verifier: "$argon2id$v=19$a$b", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddApprover(ctx, state.Approver{Name: "Eva", Verifier: "$argon2id$v=19$a$b", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeApprover(ctx, "Eva", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before, err := db.ListApprovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := conn(t, url)
	for _, stmt := range []string{
		`UPDATE approvers SET verifier = '$argon2id$v=19$c$d' WHERE name = 'Jana'`,
		`UPDATE approvers SET stores = '{}' WHERE name = 'Jana'`,
		`UPDATE approvers SET name = 'Petr', name_key = 'petr' WHERE name = 'Jana'`,
		`UPDATE approvers SET revoked_at = NULL WHERE name = 'Eva'`,
		`UPDATE approvers SET revoked_at = now() WHERE name = 'Eva'`,
		`DELETE FROM approvers`,
		`TRUNCATE approvers`,
	} {
		if _, err := c.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "change only by being revoked") {
			t.Errorf("%s: err = %v, want the refusal", stmt, err)
		}
	}
	for _, stmt := range []string{
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('Petr', 'petr', 'plain-secret', now())`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('', '', '$x', now())`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('JANA', 'jana', '$x', now())`,
	} {
		if _, err := c.Exec(ctx, stmt); err == nil {
			t.Errorf("the database accepted %s", stmt)
		}
	}
	after, err := db.ListApprovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the register changed (-before +after):\n%s", diff)
	}
	// Revoking through the store is the one change allowed.
	if _, err := db.RevokeApprover(ctx, "Jana", now.Add(2*time.Hour)); err != nil {
		t.Fatalf("revoke: %v", err)
	}
}
