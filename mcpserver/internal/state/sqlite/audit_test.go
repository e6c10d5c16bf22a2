package sqlite

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecordAuditFillsZeroTime(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if err := db.RecordAudit(ctx, state.AuditRecord{CallID: "c1", Tool: "t", Outcome: state.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	got, err := db.QueryAudit(ctx, state.AuditFilter{CallID: "c1"})
	if err != nil || len(got) != 1 {
		t.Fatalf("QueryAudit = %d, %v", len(got), err)
	}
	if got[0].Time.IsZero() {
		t.Error("a zero time was stored as zero")
	}
}

func TestAuditRowsAreAppendOnly(t *testing.T) {
	db := openTemp(t)
	exec := func(ctx context.Context, stmt string) error { _, err := db.sql.ExecContext(ctx, stmt); return err }
	statetest.AuditTrailIsAppendOnly(t, db, exec, []string{
		`UPDATE audit SET summary = 'forged' WHERE call_id = 'c1'`,
		`UPDATE audit SET outcome = 'error'`,
		`DELETE FROM audit WHERE call_id = 'c1'`,
		`DELETE FROM audit`,
	})
}

// TestRetentionProcedureFromTheDocs runs the SQL block of
// docs/observability.md's retention section as written: old rows move to
// the archive file, newer rows stay, and the guard is back afterwards.
func TestRetentionProcedureFromTheDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```sql\nATTACH DATABASE")
	if start < 0 {
		t.Fatal("docs/observability.md has no retention SQL block")
	}
	block := doc[start+len("```sql\n"):]
	block = block[:strings.Index(block, "```")]

	ctx := testCtx(t)
	dir := t.TempDir()
	db := openAt(t, filepath.Join(dir, "state.db"))
	for i, at := range []string{"2025-12-31T23:59:59Z", "2026-01-01T00:00:00Z", "2026-02-01T10:00:00Z"} {
		tm, _ := time.Parse(time.RFC3339, at)
		if err := db.RecordAudit(ctx, state.AuditRecord{Time: tm, CallID: fmt.Sprint("c", i), Tool: "t", Outcome: state.OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	archive := filepath.Join(dir, "audit-archive-2026.db")
	block = strings.ReplaceAll(block, "'audit-archive-2026.db'", "'"+archive+"'")
	// One connection: ATTACH and the transaction belong to a session, as in
	// the sqlite3 shell.
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range splitSQL(block) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	left, err := db.QueryAudit(ctx, state.AuditFilter{})
	if err != nil || len(left) != 2 || left[0].CallID != "c1" {
		t.Fatalf("live trail after archiving: %+v, %v", left, err)
	}
	if _, err := conn.ExecContext(ctx, `ATTACH DATABASE ? AS a2`, archive); err != nil {
		t.Fatal(err)
	}
	var callID string
	if err := conn.QueryRowContext(ctx, `SELECT call_id FROM a2.audit`).Scan(&callID); err != nil || callID != "c0" {
		t.Fatalf("archive holds %q, %v; want c0 only", callID, err)
	}
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM audit`); err == nil {
		t.Fatal("the DELETE guard is not back after the procedure")
	}
}

// splitSQL splits a script into statements at semicolons that end a line,
// keeping a trigger's BEGIN ... END; together.
func splitSQL(script string) []string {
	var out []string
	var cur strings.Builder
	inTrigger := false
	for _, line := range strings.Split(script, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasPrefix(line, "CREATE TRIGGER") {
			inTrigger = true
		}
		if strings.HasSuffix(line, ";") && (!inTrigger || strings.HasSuffix(line, "END;")) {
			out = append(out, cur.String())
			cur.Reset()
			inTrigger = false
		}
	}
	return out
}
