package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// TestMain removes the server binary the tests built (e2etest.Binary).
func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }

func runDemo(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	bin := e2etest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	full := append([]string{"--server-bin", bin}, args...)
	if len(args) > 0 && args[0] == "eval" {
		full = append([]string{"eval", "--server-bin", bin}, args[1:]...)
	}
	err := run(ctx, full, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestTranscriptIsReproducibleAndTellsTheStory runs the transcript twice:
// the files must be identical byte for byte (CI diffs the committed one),
// and must show the scenario's outcome.
func TestTranscriptIsReproducibleAndTellsTheStory(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "one.md"), filepath.Join(dir, "two.md")
	for _, path := range []string{first, second} {
		if _, stderr, err := runDemo(t, "--transcript", path); err != nil {
			t.Fatalf("transcript: %v\n%s", err, stderr)
		}
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs with the fixed clock differ:\n%s", firstDifference(string(a), string(b)))
	}
	md := string(a)
	for _, want := range []string{
		"STORELINK_MOCK_NOW=" + fixedNow(),
		"| 47 | 22 | 5 | 17 | order 24 units (2 cases of 12",
		"| 102 | 14 | 8 | 6 | no order: 6 does not exceed 6 | - |",
		`"mode": "preview"`,
		`"mode": "raised"`,
		`"order_id": "RO-47-001000"`,
		`"units_sold_last_24h": 22`,
		`"units_sold_last_24h": 14`,
		`["Thu 26", 21, 0, 15, 1.4]`,
		// The quantity check says review: the agent asks, the buyer says yes.
		`The agent asks the buyer: Not confirming on my own: the quantity check says "review"`,
		"The buyer: Yes, send it.",
		// Store 102's reason is its stock check's headline.
		`no order. StoreLink's stock check for it: Lasts past the 21:00 close; runs out Sat 08:30 at the earliest.`,
		`"headline": "Runs out between 17:55 and 18:24 today`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	// Both stores are compared in one risk call, with no sales calls.
	if n := strings.Count(md, "`korral_check_stock_risk`\n"); n != 1 || strings.Contains(md, "`korral_list_recent_sales`\n") {
		t.Errorf("%d risk calls (want 1) or a sales call in the transcript", n)
	}
	// Store 47 is previewed, the buyer is asked, then it is confirmed;
	// store 102 is never ordered.
	preview := strings.Index(md, `"mode": "preview"`)
	asked := strings.Index(md, "The buyer: Yes")
	raised := strings.Index(md, `"mode": "raised"`)
	if preview < 0 || asked < preview || raised < asked {
		t.Error("the order is not previewed, then agreed by the buyer, before it is raised")
	}
	if strings.Contains(md, "Confirming with the preview's idempotency key") {
		t.Error("the agent confirmed on its own at review")
	}
	if strings.Contains(md, "/v1/stores/102/replenishment") {
		t.Error("an order request for store 102 appears")
	}
	for _, leak := range []string{dir, os.TempDir() + "/", "call_id", "duration_ms", "slk_"} {
		if strings.Contains(md, leak) {
			t.Errorf("transcript contains %q, which varies per run or must not be shown", leak)
		}
	}
}

func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}

// TestDemoWithRealClock is what `make demo` prints: every call, its key
// numbers, the decisions and what was written.
func TestDemoWithRealClock(t *testing.T) {
	out, stderr, err := runDemo(t)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"clock:  real time",
		"→ korral_check_stock_risk {\"sku\":\"8847291\",\"store_ids\":[\"47\",\"102\"]}",
		"← ok: preview, nothing sent: 24 units of Madeta butter 250g to store 47",
		"← ok: raised order RO-47-",
		"gap 17, which exceeds 6",
		"gap 6, which does not exceed 6: no order. StoreLink's stock check for it: ",
		"      buyer: Yes, send it.",
		"store 47, SKU 8847291, 24 units, raised, order RO-47-",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(out, "⟦untrusted:") {
		t.Error("the readable demo shows untrusted-data markers instead of the text")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--now", "yesterday"},
		{"--transcript", "x.md", "--now", "2026-01-01T00:00:00Z"},
		{"surprise"},
		{"eval", "--run", "("},
		{"eval", "--run", "no-such-scenario"},
	} {
		_, _, err := runDemo(t, args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
}

func TestEvalSubcommandRunsScenarios(t *testing.T) {
	out, stderr, err := runDemo(t, "eval", "--run", "^(butter-restock|control-never-answers)$")
	if err != nil {
		t.Fatalf("eval: %v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{
		"butter-restock", "control-never-answers", "ok (must fail)",
		"1/1 scenarios pass; 1/1 negative controls fail as they must.",
		"korral_raise_replenishment_order",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q\n%s", want, out)
		}
	}
}

func TestTrimAndMaskAreMarked(t *testing.T) {
	res, err := parseOrdered([]byte(`{"ok":true,"data":{"ledger":{"requested_by":"storelink-demo/proc-123","state":"raised"},"items":{"columns":["n"],"rows":[[1],[2],[3],[4],[5],[6],[7]]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	notes := applyRules("korral_get_order_status", res)
	got := res.pretty()
	if !strings.Contains(got, `"requested_by": "storelink-demo/[masked in this transcript]"`) || len(notes) != 1 {
		t.Errorf("mask: %s %v", got, notes)
	}
	notes = applyRules("korral_list_recent_sales", res)
	got = res.pretty()
	if !strings.Contains(got, `"[trimmed in this transcript: 2 more transactions]"`) || !strings.Contains(notes[0], "first 5 of 7") {
		t.Errorf("trim: %s %v", got, notes)
	}
	// Key order is the server's, not alphabetical.
	if strings.Index(got, `"ok"`) > strings.Index(got, `"data"`) || strings.Index(got, `"ledger"`) > strings.Index(got, `"items"`) {
		t.Errorf("key order changed:\n%s", got)
	}
}
