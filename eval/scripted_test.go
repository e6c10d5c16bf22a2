package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// play feeds the model canned tool results by call id and collects its
// messages until it answers or stops.
func play(t *testing.T, steps []ScriptStep, results map[string]string) ([]Message, error) {
	t.Helper()
	m, err := NewScriptedModel(steps)
	if err != nil {
		t.Fatal(err)
	}
	var conv, out []Message
	for i := 0; i < 20; i++ {
		msg, err := m.Next(context.Background(), conv, nil)
		if err != nil {
			return out, err
		}
		out = append(out, msg)
		conv = append(conv, msg)
		if len(msg.ToolCalls) == 0 {
			return out, nil
		}
		for _, c := range msg.ToolCalls {
			conv = append(conv, Message{Role: RoleTool, ToolCallID: c.ID, Text: results[c.ID]})
		}
	}
	t.Fatal("the model never stopped")
	return nil, nil
}

func TestTemplatesDeriveArgumentsFromResults(t *testing.T) {
	steps := []ScriptStep{
		{ID: "risk", Tool: "korral_check_stock_risk", Args: map[string]any{"sku": "8847291"}},
		{ID: "order", Tool: "korral_raise_replenishment_order", When: "risk.ok", Args: map[string]any{
			"quantity_units": "{{risk.data.identity.case_pack}}",
			"reason":         "pack {{risk.data.identity.case_pack}} of {{risk.data.identity.product_name | plain}}",
			"flags":          []any{"{{risk.data.flags.0}}"},
		}},
		{ID: "never", Tool: "korral_get_order_status", When: "!risk.ok", Args: map[string]any{"order_id": "x"}},
		{Answer: "done: {{order.data.mode}}"},
	}
	results := map[string]string{
		"risk":  `{"ok":true,"data":{"identity":{"case_pack":12,"product_name":"⟦untrusted:ab12cd⟧Madeta butter 250g⟦/ab12cd⟧"},"flags":["stale"]}}`,
		"order": `{"ok":true,"data":{"mode":"preview"}}`,
	}
	msgs, err := play(t, steps, results)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 2 calls and an answer", len(msgs))
	}
	var args map[string]any
	if err := json.Unmarshal(msgs[1].ToolCalls[0].Arguments, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"quantity_units": 12.0, "reason": "pack 12 of Madeta butter 250g", "flags": []any{"stale"}}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("derived arguments (-want +got):\n%s", diff)
	}
	if msgs[2].Text != "done: preview" {
		t.Errorf("answer %q", msgs[2].Text)
	}
}

func TestMissingReferenceIsAnError(t *testing.T) {
	steps := []ScriptStep{
		{ID: "risk", Tool: "korral_check_stock_risk"},
		{ID: "order", Tool: "korral_raise_replenishment_order", Args: map[string]any{"quantity_units": "{{risk.data.nope}}"}},
	}
	_, err := play(t, steps, map[string]string{"risk": `{"ok":false,"error":{"code":"NOT_FOUND"}}`})
	if err == nil || !strings.Contains(err.Error(), "risk.data.nope") {
		t.Fatalf("want an error naming the missing ref, got %v", err)
	}
}

func TestTrajectoryWithoutAnswerGivesNone(t *testing.T) {
	msgs, err := play(t, []ScriptStep{{ID: "s", Tool: "korral_list_authorized_stores"}}, map[string]string{"s": `{"ok":true}`})
	if err != nil {
		t.Fatal(err)
	}
	if last := msgs[len(msgs)-1]; len(last.ToolCalls) != 0 || last.Text != "" {
		t.Fatalf("want an empty final message, got %+v", last)
	}
}

func TestTrajectoryValidation(t *testing.T) {
	for name, steps := range map[string][]ScriptStep{
		"two kinds":      {{ID: "a", Tool: "t", Answer: "x"}},
		"no kind":        {{ID: "a"}},
		"tool no id":     {{Tool: "t"}},
		"duplicate id":   {{ID: "a", Tool: "t"}, {ID: "a", Tool: "t"}},
		"unknown policy": {{ID: "a", Policy: "guess"}},
	} {
		if _, err := NewScriptedModel(steps); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRestockGap(t *testing.T) {
	for _, tc := range []struct {
		sold, onHand float64
		exceeds      bool
		qty          float64
	}{
		{22, 5, true, 24},  // gap 17: two cases
		{14, 8, false, 12}, // gap exactly 6 does not exceed 6
		{19, 7, true, 12},  // gap 12: exactly one case
		{3, 10, false, 0},  // no gap
		{20, -4, true, 24}, // negative on-hand widens the gap
	} {
		out, why, err := restockGap(map[string]any{"store_id": "47", "sold": tc.sold, "on_hand": tc.onHand, "case_pack": 12.0, "threshold": 6.0})
		if err != nil {
			t.Fatal(err)
		}
		if out["exceeds"] != tc.exceeds || out["quantity"] != tc.qty || why == "" {
			t.Errorf("sold %v on hand %v: got %v (%s)", tc.sold, tc.onHand, out, why)
		}
	}
	if _, _, err := restockGap(map[string]any{"sold": "22"}); err == nil {
		t.Error("text where a number belongs was accepted")
	}
}

func TestConfirmPreview(t *testing.T) {
	preview := func(data string) map[string]any {
		var v map[string]any
		if err := json.Unmarshal([]byte(`{"ok":true,"data":`+data+`}`), &v); err != nil {
			t.Fatal(err)
		}
		return map[string]any{"preview": v}
	}
	for name, tc := range map[string]struct {
		data         string
		confirm, ask bool
	}{
		"clean": {`{"mode":"preview","writes_enabled":true,"idempotency_key":"k-12345678","quantity_check":{"verdict":"ok","reasons":[]}}`, true, false},
		// At review the buyer decides: the agent asks, keeping the key.
		"review":           {`{"mode":"preview","writes_enabled":true,"idempotency_key":"k-12345678","request":{"body":{"quantity_units":24}},"quantity_check":{"verdict":"review","reasons":["short cover"]}}`, false, true},
		"refused":          {`{"mode":"preview","writes_enabled":true,"quantity_check":{"verdict":"refuse","reasons":["over the ceiling"]}}`, false, false},
		"duplicate":        {`{"mode":"preview","writes_enabled":true,"duplicate_warning":"1 order open","quantity_check":{"verdict":"review"}}`, false, false},
		"writes off":       {`{"mode":"preview","writes_enabled":false,"quantity_check":{"verdict":"ok"}}`, false, false},
		"already a replay": {`{"mode":"replay","writes_enabled":true}`, false, false},
	} {
		out, why, err := confirmPreview(preview(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		if out["confirm"] != tc.confirm || out["ask"] != tc.ask || why == "" {
			t.Errorf("%s: confirm %v ask %v, want %v %v (%s)", name, out["confirm"], out["ask"], tc.confirm, tc.ask, why)
		}
		if (tc.confirm || tc.ask) && out["idempotency_key"] != "k-12345678" {
			t.Errorf("%s: key %v", name, out["idempotency_key"])
		}
		if q, _ := out["question"].(string); tc.ask && q != `The quantity check says "review" (short cover). Shall I send the 24 units anyway? Nothing is sent until you say yes.` {
			t.Errorf("%s: question %q", name, q)
		}
	}
}

// TestAskWaitsForTheBuyer: an ask step ends the turn as a question; the
// reply is bound, and a step on "yes" runs only when the buyer said yes.
func TestAskWaitsForTheBuyer(t *testing.T) {
	steps := []ScriptStep{
		{ID: "ask", Ask: "Send {{n}}?"},
		{ID: "send", When: "never||ask.yes", Tool: "korral_raise_replenishment_order"},
		{Answer: "reply {{ask.reply}}, sent {{send.ok?}}"},
	}
	for reply, want := range map[string]string{"Yes, send it.": "reply Yes, send it., sent true", "No.": "reply No., sent"} {
		m, err := NewScriptedModel(steps)
		if err != nil {
			t.Fatal(err)
		}
		m.bindings["n"] = 24.0
		q, err := m.Next(context.Background(), nil, nil)
		if err != nil || !q.Asks || q.Text != "Send 24?" || len(q.ToolCalls) != 0 {
			t.Fatalf("question %+v, %v", q, err)
		}
		conv := []Message{q, {Role: RoleUser, Text: reply}}
		msg, err := m.Next(context.Background(), conv, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.ToolCalls) == 1 {
			conv = append(conv, msg, Message{Role: RoleTool, ToolCallID: "send", Text: `{"ok":true}`})
			if msg, err = m.Next(context.Background(), conv, nil); err != nil {
				t.Fatal(err)
			}
		}
		if msg.Text != want || msg.Asks {
			t.Errorf("reply %q: answer %q, want %q", reply, msg.Text, want)
		}
	}
}

func TestParseScenariosRejectsWhatItCannotCheck(t *testing.T) {
	base := `{"name":"x","request":"r","trajectory":[{"answer":"a"}],"expect":{%s}%s}`
	for name, doc := range map[string]string{
		"misspelt check":       `{"scenarios":[` + strings.Replace(base, "%s", `"answer_mention":["a"]`, 1) + `]}`,
		"control without list": `{"scenarios":[{"name":"x","negative_control":true,"request":"r","trajectory":[{"answer":"a"}],"expect":{}}]}`,
		"harness env":          `{"scenarios":[{"name":"x","request":"r","env":{"STATE_DB_PATH":"/tmp/x"},"trajectory":[{"answer":"a"}],"expect":{}}]}`,
		"bad outcome":          `{"scenarios":[{"name":"x","request":"r","trajectory":[{"answer":"a"}],"expect":{"outcomes":["ok"]}}]}`,
		"duplicate names":      `{"scenarios":[{"name":"x","request":"r","trajectory":[],"expect":{}},{"name":"x","request":"r","trajectory":[],"expect":{}}]}`,
	} {
		doc = strings.Replace(doc, "%s", "", -1)
		if _, err := ParseScenarios([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Scenarios(); err != nil {
		t.Fatalf("shipped scenarios: %v", err)
	}
}
