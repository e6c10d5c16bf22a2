package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAuditRecordAndQuery(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	day := base // 2025-03-14
	recs := []state.AuditRecord{
		// Last instant of the previous UTC day, written in a zone where it is
		// already the 14th: it belongs to the 13th.
		{Time: day.Truncate(24 * time.Hour).Add(-time.Nanosecond).In(time.FixedZone("east", 2*3600)), CallID: "c0", Tool: "korral_check_stock_risk", StoreID: "47", Outcome: state.OutcomeOK},
		{Time: day.Truncate(24 * time.Hour), CallID: "c1", Client: "claude", Session: "s1", Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK, Summary: "checked stock", DurationMS: 12.5},
		{Time: day.Add(time.Hour), CallID: "c2", Tool: "korral_raise_replenishment_order", StoreID: "47", SKU: "8847291", Outcome: "error", ErrorCode: "WRITES_DISABLED", DurationMS: 1},
		{Time: day.Add(2 * time.Hour), CallID: "c3", Tool: "korral_check_stock_risk", StoreID: "102", SKU: "8847291", Outcome: state.OutcomeOK, DurationMS: 30},
		{Time: day.Add(14*time.Hour + 59*time.Minute), CallID: "c4", Tool: "korral_list_authorized_stores", Outcome: state.OutcomeOK},
		{Time: day.Truncate(24 * time.Hour).Add(24 * time.Hour), CallID: "c5", Tool: "korral_check_stock_risk", StoreID: "47", Outcome: state.OutcomeOK},
	}
	// Recorded out of order: the trail is ordered by time, not by arrival.
	for _, i := range []int{3, 0, 5, 1, 4, 2} {
		if err := db.RecordAudit(ctx, recs[i]); err != nil {
			t.Fatalf("RecordAudit %s: %v", recs[i].CallID, err)
		}
	}

	tests := []struct {
		name string
		f    state.AuditFilter
		want []string
	}{
		{"everything", state.AuditFilter{}, []string{"c0", "c1", "c2", "c3", "c4", "c5"}},
		{"day", state.AuditFilter{Day: day}, []string{"c1", "c2", "c3", "c4"}},
		// 00:30 on the 15th in UTC+1 is still the 14th in UTC.
		{"day given in another zone", state.AuditFilter{Day: time.Date(2025, 3, 15, 0, 30, 0, 0, time.FixedZone("cet", 3600))}, []string{"c1", "c2", "c3", "c4"}},
		{"previous day", state.AuditFilter{Day: day.AddDate(0, 0, -1)}, []string{"c0"}},
		{"store", state.AuditFilter{StoreID: "47"}, []string{"c0", "c1", "c2", "c5"}},
		{"store and day", state.AuditFilter{StoreID: "47", Day: day}, []string{"c1", "c2"}},
		{"call id", state.AuditFilter{CallID: "c3"}, []string{"c3"}},
		{"tool", state.AuditFilter{Tool: "korral_raise_replenishment_order"}, []string{"c2"}},
		{"limit keeps the latest", state.AuditFilter{Day: day, Limit: 2}, []string{"c3", "c4"}},
		{"no match", state.AuditFilter{CallID: "nope"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.QueryAudit(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.CallID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("call ids (-want +got):\n%s", diff)
			}
		})
	}

	got, err := db.QueryAudit(ctx, state.AuditFilter{CallID: "c1"})
	if err != nil || len(got) != 1 {
		t.Fatalf("QueryAudit(c1) = %d records, %v", len(got), err)
	}
	if diff := cmp.Diff(recs[1], got[0]); diff != "" {
		t.Errorf("stored record (-want +got):\n%s", diff)
	}
}

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

func TestReport(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	record := func(tool string, at time.Time, ms float64, outcome, code string) {
		t.Helper()
		if err := db.RecordAudit(ctx, state.AuditRecord{Time: at, CallID: fmt.Sprintf("%s-%v", tool, ms), Tool: tool, Outcome: outcome, ErrorCode: code, DurationMS: ms}); err != nil {
			t.Fatal(err)
		}
	}
	// Tool "risk": durations 1..20 ms recorded in a scrambled order; every
	// fifth call failed.
	codes := map[int]string{5: "NOT_FOUND", 10: "RATE_LIMITED", 15: "NOT_FOUND", 20: ""}
	for i := range 20 {
		ms := (i*7)%20 + 1 // a permutation of 1..20
		outcome := state.OutcomeOK
		code, failed := codes[ms]
		if failed {
			outcome = "error"
		}
		record("risk", base.Add(time.Duration(i)*time.Minute), float64(ms), outcome, code)
	}
	// Tool "order": three calls, two timeouts.
	record("order", base, 5, state.OutcomeOK, "")
	record("order", base.Add(time.Minute), 1, "error", "UPSTREAM_TIMEOUT")
	record("order", base.Add(2*time.Minute), 3, "error", "UPSTREAM_TIMEOUT")
	// Another day, which the day filter must leave out.
	record("risk", base.AddDate(0, 0, 1), 999, "error", "INTERNAL_ERROR")

	// Nearest rank: rank = ceil(p/100 * n).
	//   risk, n=20: p50 -> rank 10 = 10 ms; p95 -> rank 19 = 19 ms; p99 -> rank 20 = 20 ms.
	//   order, n=3 sorted [1 3 5]: p50 -> rank 2 = 3 ms; p95, p99 -> rank 3 = 5 ms.
	want := []state.ToolStats{
		{Tool: "order", Calls: 3, OK: 1, Errors: 2, ErrorRate: 2.0 / 3.0, P50: 3, P95: 5, P99: 5,
			ErrorCodes: map[string]int{"UPSTREAM_TIMEOUT": 2}},
		{Tool: "risk", Calls: 20, OK: 16, Errors: 4, ErrorRate: 0.2, P50: 10, P95: 19, P99: 20,
			ErrorCodes: map[string]int{"NOT_FOUND": 2, "RATE_LIMITED": 1}},
	}
	got, err := db.Report(ctx, state.AuditFilter{Day: base, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Report for the day (-want +got):\n%s", diff)
	}

	got, err = db.Report(ctx, state.AuditFilter{Tool: "risk"})
	if err != nil {
		t.Fatal(err)
	}
	// All days: 21 calls, durations 1..20 and 999.
	//   p50 -> rank 11 = 11; p95 -> rank 20 = 20; p99 -> rank 21 = 999.
	wantRisk := []state.ToolStats{{Tool: "risk", Calls: 21, OK: 16, Errors: 5, ErrorRate: 5.0 / 21.0, P50: 11, P95: 20, P99: 999,
		ErrorCodes: map[string]int{"NOT_FOUND": 2, "RATE_LIMITED": 1, "INTERNAL_ERROR": 1}}}
	if diff := cmp.Diff(wantRisk, got); diff != "" {
		t.Errorf("Report for one tool (-want +got):\n%s", diff)
	}

	got, err = db.Report(ctx, state.AuditFilter{Tool: "nothing"})
	if err != nil || len(got) != 0 {
		t.Errorf("Report with no calls = %v, %v; want empty", got, err)
	}
}

func TestAuditRowsAreAppendOnly(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if err := db.RecordAudit(ctx, state.AuditRecord{Time: base, CallID: "c1", Tool: "korral_check_stock_risk", Outcome: state.OutcomeOK, Summary: "real"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE audit SET summary = 'forged' WHERE call_id = 'c1'`,
		`UPDATE audit SET outcome = 'error'`,
		`DELETE FROM audit WHERE call_id = 'c1'`,
		`DELETE FROM audit`,
	} {
		if _, err := db.sql.ExecContext(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", stmt, err)
		}
	}
	got, err := db.QueryAudit(ctx, state.AuditFilter{})
	if err != nil || len(got) != 1 || got[0].Summary != "real" || got[0].Outcome != state.OutcomeOK {
		t.Fatalf("trail after the attempts: %+v, %v", got, err)
	}
	// Appending still works.
	if err := db.RecordAudit(ctx, state.AuditRecord{Time: base, CallID: "c2", Tool: "t", Outcome: state.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
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
