package sqlite

import (
	"context"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// TestApproverRecordsChangeOnlyByRevoking tampers with the register through
// plain SQL: a record cannot be edited, un-revoked or deleted.
func TestApproverRecordsChangeOnlyByRevoking(t *testing.T) {
	db := openTemp(t)
	exec := func(ctx context.Context, stmt string) error { _, err := db.sql.ExecContext(ctx, stmt); return err }
	statetest.ApproversChangeOnlyByRevoking(t, db, exec, "approver records", []string{
		`UPDATE approvers SET verifier = '$argon2id$v=19$c$d' WHERE name = 'Jana'`,
		`UPDATE approvers SET stores = '' WHERE name = 'Jana'`,
		`UPDATE approvers SET name = 'Petr', name_key = 'petr' WHERE name = 'Jana'`,
		`UPDATE approvers SET revoked_at = NULL WHERE name = 'Eva'`,
		`UPDATE approvers SET revoked_at = '2030-01-01T00:00:00.000000000Z' WHERE name = 'Eva'`,
		`DELETE FROM approvers`,
	}, []string{
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('Petr', 'petr', 'plain-secret', 'x')`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('', '', '$x', 'x')`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('JANA', 'jana', '$x', 'x')`,
	})
}
