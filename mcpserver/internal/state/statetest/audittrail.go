package statetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
)

func audit(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other := reopen()
	day2 := base.Add(24 * time.Hour)
	recs := []state.AuditRecord{
		{Time: base, CallID: "c1", Client: "a", Session: "s", Tool: "read", StoreID: "47", Outcome: state.OutcomeOK, DurationMS: 3},
		{Time: base.Add(time.Second), CallID: "c2", Client: "a", Session: "s", Tool: "read", StoreID: "47", Outcome: "error", ErrorCode: "NOT_FOUND", DurationMS: 1},
		{Time: base.Add(2 * time.Second), CallID: "c3", Client: "b", Session: "t", Tool: "write", StoreID: "12", Outcome: state.OutcomeOK, DurationMS: 20},
		{Time: day2, CallID: "c4", Client: "b", Session: "t", Tool: "read", StoreID: "47", Outcome: "error", ErrorCode: "NOT_FOUND", DurationMS: 2,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
	}
	for i, r := range recs {
		// Two handles write, as two replicas would; both see everything.
		if err := []state.Store{s, other}[i%2].RecordAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := other.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, all); diff != "" {
		t.Errorf("QueryAudit (-want +got):\n%s", diff)
	}
	last, _ := s.QueryAudit(ctx, state.AuditFilter{Limit: 2})
	if len(last) != 2 || last[0].CallID != "c3" || last[1].CallID != "c4" {
		t.Errorf("Limit 2 = %v; want c3, c4", last)
	}
	day, _ := s.QueryAudit(ctx, state.AuditFilter{Day: base, StoreID: "47"})
	if len(day) != 2 {
		t.Errorf("day and store filter: %d records, want 2", len(day))
	}
	rep, err := s.Report(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.ToolStats{
		{Tool: "read", Calls: 3, OK: 1, Errors: 2, ErrorRate: 2.0 / 3, P50: 2, P95: 3, P99: 3, ErrorCodes: map[string]int{"NOT_FOUND": 2}},
		{Tool: "write", Calls: 1, OK: 1, P50: 20, P95: 20, P99: 20, ErrorCodes: map[string]int{}},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}
	empty, err := s.Report(ctx, state.AuditFilter{Tool: "none"})
	if err != nil || len(empty) != 0 {
		t.Errorf("Report of nothing = %v, %v", empty, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
