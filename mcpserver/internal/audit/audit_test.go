package audit

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// trail keeps what it is given.
type trail struct {
	state.AuditLog
	got []state.AuditRecord
}

func (t *trail) RecordAudit(_ context.Context, r state.AuditRecord) error {
	t.got = append(t.got, r)
	return nil
}

// TestRecordBoundsTheSummary: a summary up to MaxSummary runes is stored
// exact; a longer one is cut there, on a rune, with a mark.
func TestRecordBoundsTheSummary(t *testing.T) {
	var tr trail
	s := Store{Log: &tr}
	exact := strings.Repeat("é", MaxSummary)
	long := strings.Repeat("Praha Smíchov ", 100000/14)
	for _, sum := range []string{"Listed 2 stores.", exact, long} {
		if err := s.Record(context.Background(), state.AuditRecord{Tool: "t", Summary: sum}); err != nil {
			t.Fatal(err)
		}
	}
	if tr.got[0].Summary != "Listed 2 stores." || tr.got[1].Summary != exact {
		t.Fatalf("a summary within the bound was changed")
	}
	cut := tr.got[2].Summary
	if n := utf8.RuneCountInString(cut); n != MaxSummary+1 || !strings.HasSuffix(cut, "…") || !utf8.ValidString(cut) || !strings.HasPrefix(long, strings.TrimSuffix(cut, "…")) {
		t.Fatalf("a %d-byte summary was stored as %d runes (%d bytes), ending %q", len(long), n, len(cut), cut[len(cut)-20:])
	}
}

// spoolingTrail also spools, as SQLite's log does.
type spoolingTrail struct {
	trail
	spooled []state.AuditRecord
}

func (t *spoolingTrail) SpoolAudit(_ context.Context, r state.AuditRecord) error {
	t.spooled = append(t.spooled, r)
	return nil
}

// TestRecordSpoolsWhereTheLogSpools: a log that spools takes a call's
// record through SpoolAudit (ADR 0044); any other through RecordAudit.
func TestRecordSpoolsWhereTheLogSpools(t *testing.T) {
	var sp spoolingTrail
	if err := (Store{Log: &sp}).Record(context.Background(), state.AuditRecord{Tool: "t", Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	if len(sp.spooled) != 1 || len(sp.got) != 0 {
		t.Errorf("spooled %d, recorded %d; want 1 and 0", len(sp.spooled), len(sp.got))
	}
	var tr trail
	if err := (Store{Log: &tr}).Record(context.Background(), state.AuditRecord{Tool: "t", Summary: "s"}); err != nil || len(tr.got) != 1 {
		t.Errorf("a log without a spool: %d recorded, %v", len(tr.got), err)
	}
}
