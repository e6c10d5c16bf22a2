package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// hostile holds values that could forge output: a line break, a carriage
// return, a tab, terminal escapes and a bidi override.
const hostile = "restock\n2026-11-30 09:00:00  approval-x  approver:boss  approvals.approve\r\t\x1b[2K\x1b]0;t\x07\u202eevil\u0085"

func TestTextPrintersKeepOneRecordPerLine(t *testing.T) {
	recs := []state.AuditRecord{
		{Time: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), CallID: "c1", Client: hostile, Tool: "korral_" + hostile, StoreID: hostile, SKU: hostile, Outcome: "error", ErrorCode: hostile, Summary: hostile},
		{Time: time.Date(2026, 11, 30, 8, 1, 0, 0, time.UTC), CallID: hostile, Tool: "korral_check_stock_risk", Outcome: "ok", Summary: "fine"},
	}
	var trail bytes.Buffer
	if err := printTrail(&trail, recs, "text"); err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	stats := []state.ToolStats{{Tool: hostile, Calls: 1, Errors: 1, ErrorRate: 1, ErrorCodes: map[string]int{hostile: 1}}}
	if err := printReport(&report, stats, pilot{}, "text"); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"audit": trail.String(), "audit report": report.String()} {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if want := map[string]int{"audit": 3, "audit report": 6}[name]; len(lines) != want {
			t.Errorf("%s: %d lines, want %d:\n%s", name, len(lines), want, out)
		}
		if strings.ContainsAny(out, "\r\t\x1b\x07\u202e\u0085") {
			t.Errorf("%s prints raw control characters: %q", name, out)
		}
		if !strings.Contains(out, `restock\n2026-11-30`) {
			t.Errorf("%s does not show the value escaped:\n%s", name, out)
		}
	}

	// JSON keeps the exact value.
	var js bytes.Buffer
	if err := printTrail(&js, recs[:1], "json"); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got["summary"] != hostile {
		t.Fatalf("json summary %q (%v)", got["summary"], err)
	}
}
