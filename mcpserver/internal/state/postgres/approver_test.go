package postgres_test

import (
	"context"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// TestApproverRecordsChangeOnlyByRevoking tampers with the register through
// a plain connection: a record cannot be edited, un-revoked, deleted or
// truncated away, whatever the client.
func TestApproverRecordsChangeOnlyByRevoking(t *testing.T) {
	url := statetest.PostgresURL(t)
	c := conn(t, url)
	exec := func(ctx context.Context, stmt string) error { _, err := c.Exec(ctx, stmt); return err }
	statetest.ApproversChangeOnlyByRevoking(t, open(t, url), exec, "change only by being revoked", []string{
		`UPDATE approvers SET verifier = '$argon2id$v=19$c$d' WHERE name = 'Jana'`,
		`UPDATE approvers SET stores = '{}' WHERE name = 'Jana'`,
		`UPDATE approvers SET name = 'Petr', name_key = 'petr' WHERE name = 'Jana'`,
		`UPDATE approvers SET revoked_at = NULL WHERE name = 'Eva'`,
		`UPDATE approvers SET revoked_at = now() WHERE name = 'Eva'`,
		`DELETE FROM approvers`,
		`TRUNCATE approvers`,
	}, []string{
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('Petr', 'petr', 'plain-secret', now())`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('', '', '$x', now())`,
		`INSERT INTO approvers (name, name_key, verifier, created_at) VALUES ('JANA', 'jana', '$x', now())`,
	})
}
