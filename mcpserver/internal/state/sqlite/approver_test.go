package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestApproverRecordsChangeOnlyByRevoking tampers with the register through
// plain SQL: a record cannot be edited, un-revoked or deleted.
func TestApproverRecordsChangeOnlyByRevoking(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, err := db.AddApprover(ctx, state.Approver{Name: "Jana", Stores: []string{"47"}, Verifier: "$argon2id$v=19$a$b", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddApprover(ctx, state.Approver{Name: "Eva", Verifier: "$argon2id$v=19$a$b", CreatedAt: base}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeApprover(ctx, "Eva", base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before, err := db.ListApprovers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE approvers SET verifier = '$argon2id$v=19$c$d' WHERE name = 'Jana'`,
		`UPDATE approvers SET stores = '' WHERE name = 'Jana'`,
		`UPDATE approvers SET name = 'Petr', name_key = 'petr' WHERE name = 'Jana'`,
		`UPDATE approvers SET revoked_at = NULL WHERE name = 'Eva'`,
		`UPDATE approvers SET revoked_at = '2030-01-01T00:00:00.000000000Z' WHERE name = 'Eva'`,
		`DELETE FROM approvers`,
	} {
		if _, err := db.sql.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "approver records") {
			t.Errorf("%s: err = %v, want the refusal", stmt, err)
		}
	}
	for _, stmt := range []string{
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('Petr', 'petr', 'plain-secret', 'x')`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('', '', '$x', 'x')`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('JANA', 'jana', '$x', 'x')`,
	} {
		if _, err := db.sql.ExecContext(ctx, stmt); err == nil {
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
	if _, err := db.RevokeApprover(ctx, "Jana", base.Add(2*time.Hour)); err != nil {
		t.Fatalf("revoke: %v", err)
	}
}
