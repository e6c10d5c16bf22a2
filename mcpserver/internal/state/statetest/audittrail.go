package statetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// auditQuery: records written through two handles, as two replicas would,
// and out of order, read back in time order and whole; a filter selects by
// UTC day (in whatever zone it is given), store, call id or tool, and a
// limit keeps the latest.
func auditQuery(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other := reopen()
	day := base
	midnight := day.Truncate(24 * time.Hour)
	recs := []state.AuditRecord{
		// The last microsecond of the previous UTC day, written in a zone
		// where it is already the next day: it belongs to the previous one.
		{Time: midnight.Add(-time.Microsecond).In(time.FixedZone("east", 2*3600)), CallID: "c0", Tool: "risk", StoreID: "47", Outcome: state.OutcomeOK},
		{Time: midnight, CallID: "c1", Client: "claude", Session: "s1", Tool: "risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK,
			Summary: "checked stock", DurationMS: 12.5, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{Time: day.Add(time.Hour), CallID: "c2", Tool: "order", StoreID: "47", SKU: "8847291", Outcome: "error", ErrorCode: "WRITES_DISABLED", DurationMS: 1},
		{Time: day.Add(2 * time.Hour), CallID: "c3", Tool: "risk", StoreID: "102", SKU: "8847291", Outcome: state.OutcomeOK, DurationMS: 30},
		{Time: midnight.Add(24*time.Hour - time.Minute), CallID: "c4", Tool: "stores", Outcome: state.OutcomeOK},
		{Time: midnight.Add(24 * time.Hour), CallID: "c5", Tool: "risk", StoreID: "47", Outcome: state.OutcomeOK},
	}
	// Through both handles, and both ways in where a backend spools.
	for n, i := range []int{3, 0, 5, 1, 4, 2} {
		if err := recordVia([]state.Store{s, other}[n%2], n/2)(ctx, recs[i]); err != nil {
			t.Fatalf("RecordAudit %s: %v", recs[i].CallID, err)
		}
	}
	for _, tc := range []struct {
		name string
		f    state.AuditFilter
		want []string
	}{
		{"everything", state.AuditFilter{}, []string{"c0", "c1", "c2", "c3", "c4", "c5"}},
		{"day", state.AuditFilter{Day: day}, []string{"c1", "c2", "c3", "c4"}},
		// 00:30 of the next day in UTC+1 is still the day in UTC.
		{"day given in another zone", state.AuditFilter{Day: midnight.Add(23*time.Hour + 30*time.Minute).In(time.FixedZone("cet", 3600))}, []string{"c1", "c2", "c3", "c4"}},
		{"previous day", state.AuditFilter{Day: day.AddDate(0, 0, -1)}, []string{"c0"}},
		{"store", state.AuditFilter{StoreID: "47"}, []string{"c0", "c1", "c2", "c5"}},
		{"store and day", state.AuditFilter{StoreID: "47", Day: day}, []string{"c1", "c2"}},
		{"call id", state.AuditFilter{CallID: "c3"}, []string{"c3"}},
		{"tool", state.AuditFilter{Tool: "order"}, []string{"c2"}},
		{"limit keeps the latest", state.AuditFilter{Day: day, Limit: 2}, []string{"c3", "c4"}},
		{"no match", state.AuditFilter{CallID: "nope"}, nil},
	} {
		got, err := other.QueryAudit(ctx, tc.f)
		var ids []string
		for _, r := range got {
			ids = append(ids, r.CallID)
		}
		if diff := cmp.Diff(tc.want, ids); err != nil || diff != "" {
			t.Errorf("%s: %v, call ids (-want +got):\n%s", tc.name, err, diff)
		}
	}
	if got, err := s.QueryAudit(ctx, state.AuditFilter{CallID: "c1"}); err != nil || len(got) != 1 || !cmp.Equal(recs[1], got[0]) {
		t.Errorf("stored record = %+v, %v; want %+v", got, err, recs[1])
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// auditReport: per tool, the calls, errors and their codes, and nearest-rank
// percentiles of the durations, for a day or for all days.
func auditReport(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	n := 0
	record := func(tool string, at time.Time, ms float64, outcome, code string) {
		t.Helper()
		n++
		if err := recordVia(s, n)(ctx, state.AuditRecord{Time: at, CallID: fmt.Sprintf("%s-%v", tool, ms), Tool: tool, Outcome: outcome, ErrorCode: code, DurationMS: ms}); err != nil {
			t.Fatal(err)
		}
	}
	// "risk": durations 1..20 ms in a scrambled order; four of them failed.
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
	record("order", base, 5, state.OutcomeOK, "")
	record("order", base.Add(time.Minute), 1, "error", "UPSTREAM_TIMEOUT")
	record("order", base.Add(2*time.Minute), 3, "error", "UPSTREAM_TIMEOUT")
	record("risk", base.AddDate(0, 0, 1), 999, "error", "INTERNAL_ERROR") // another day

	// Nearest rank = ceil(p/100 * n). risk, n=20: p50 10, p95 19, p99 20 ms;
	// order, n=3 [1 3 5]: p50 3, p95 and p99 5 ms; risk on all days, n=21
	// with 999: p50 11, p95 20, p99 999 ms.
	for _, tc := range []struct {
		f    state.AuditFilter
		want []state.ToolStats
	}{
		{state.AuditFilter{Day: base, Limit: 1}, []state.ToolStats{
			{Tool: "order", Calls: 3, OK: 1, Errors: 2, ErrorRate: 2.0 / 3.0, P50: 3, P95: 5, P99: 5, ErrorCodes: map[string]int{"UPSTREAM_TIMEOUT": 2}},
			{Tool: "risk", Calls: 20, OK: 16, Errors: 4, ErrorRate: 0.2, P50: 10, P95: 19, P99: 20, ErrorCodes: map[string]int{"NOT_FOUND": 2, "RATE_LIMITED": 1}},
		}},
		{state.AuditFilter{Tool: "risk"}, []state.ToolStats{{Tool: "risk", Calls: 21, OK: 16, Errors: 5, ErrorRate: 5.0 / 21.0, P50: 11, P95: 20, P99: 999,
			ErrorCodes: map[string]int{"NOT_FOUND": 2, "RATE_LIMITED": 1, "INTERNAL_ERROR": 1}}}},
		{state.AuditFilter{Tool: "nothing"}, nil},
	} {
		got, err := s.Report(ctx, tc.f)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); err != nil || diff != "" {
			t.Errorf("Report(%+v): %v (-want +got):\n%s", tc.f, err, diff)
		}
	}
}

// recordVia is the n-th way a record reaches s: RecordAudit, and every
// other time SpoolAudit where s spools (state.AuditSpooler), so the
// conformance cases read a trail of both kinds of rows.
func recordVia(s state.Store, n int) func(ctx context.Context, r state.AuditRecord) error {
	if sp, ok := s.(state.AuditSpooler); ok && n%2 == 1 {
		return sp.SpoolAudit
	}
	return s.RecordAudit
}

// AuditTrailIsAppendOnly records one row, then tampers with the trail
// through plain SQL (exec, on the backend's own connection): each of stmts
// must fail with the append-only refusal, the row must be unchanged, and
// appending must still work.
func AuditTrailIsAppendOnly(t *testing.T, s state.Store, exec func(ctx context.Context, stmt string) error, stmts []string) {
	t.Helper()
	ctx := ctxOf(t)
	if err := s.RecordAudit(ctx, state.AuditRecord{Time: base, CallID: "c1", Tool: "read", Outcome: state.OutcomeOK, Summary: "real"}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range stmts {
		if err := exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v, want the append-only refusal", stmt, err)
		}
	}
	if got, err := s.QueryAudit(ctx, state.AuditFilter{}); err != nil || len(got) != 1 || got[0].Summary != "real" || got[0].Outcome != state.OutcomeOK {
		t.Fatalf("trail after the attempts: %+v, %v", got, err)
	}
	if err := s.RecordAudit(ctx, state.AuditRecord{Time: base, CallID: "c2", Tool: "t", Outcome: state.OutcomeOK}); err != nil {
		t.Fatalf("appending after the attempts: %v", err)
	}
}
