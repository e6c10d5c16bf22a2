package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPromptsAreAudited: every prompts/get is an audit record like a tool
// call: call id, prompt, declared arguments (bounded), store and SKU, and
// the outcome with its code when refused, also by the SDK.
func TestPromptsAreAudited(t *testing.T) {
	db := sharedLedger(t)
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2","311":"k3"}`), func(o *Options) {
		o.Audit = audit.Store{Log: db}
		o.Writes = &WriteOptions{MaxOrderUnits: 500, AllowWrites: true, Ledger: db, UpstreamID: "up-1"}
	})
	ctx := context.Background()
	get := func(name string, args map[string]string) error {
		_, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	}
	if err := get(promptRestockGaps, map[string]string{"sku": "4006381", "min_gap_units": "12", "store_ids": "47"}); err != nil {
		t.Fatal(err)
	}
	if err := get(promptOrdersSince, map[string]string{"sku": "4006381", "store_id": "102", "token": "s3cret-value"}); err != nil {
		t.Fatal(err)
	}
	if err := get(promptRestockGaps, map[string]string{"sku": "nope", "min_gap_units": "12"}); err == nil {
		t.Fatal("a bad sku was accepted")
	}
	if err := get("korral_no_such_prompt", map[string]string{"password": "hunter2"}); err == nil {
		t.Fatal("an unknown prompt was served")
	}

	recs, err := db.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Tool, StoreID, SKU, Outcome, ErrorCode, Summary string }
	var got []row
	ids := map[string]bool{}
	for _, r := range recs {
		got = append(got, row{r.Tool, r.StoreID, r.SKU, r.Outcome, r.ErrorCode, r.Summary})
		if r.CallID == "" || ids[r.CallID] {
			t.Errorf("%s: call id %q missing or repeated", r.Tool, r.CallID)
		}
		ids[r.CallID] = true
	}
	want := []row{
		{"prompt.korral_restock_gaps", "47", "4006381", "ok", "", "Prompt korral_restock_gaps with sku=4006381, min_gap_units=12, store_ids=47."},
		{"prompt.korral_orders_since", "102", "4006381", "ok", "", "Prompt korral_orders_since with sku=4006381, store_id=102, 1 undeclared argument(s), values not kept."},
		{"prompt.korral_restock_gaps", "", "", "error", "INVALID_ARGUMENT", "Prompt korral_restock_gaps with sku=nope, min_gap_units=12; refused: sku must be 4 to 14 digits, like \"4006381\"."},
		{"prompt.korral_no_such_prompt", "", "", "error", "INVALID_ARGUMENT", "Prompt korral_no_such_prompt with 1 undeclared argument(s), values not kept; refused: unknown prompt \"korral_no_such_prompt\"."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit rows (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"s3cret-value", "hunter2"} {
		if strings.Contains(s.logText(), secret) {
			t.Errorf("the log keeps the undeclared argument %q", secret)
		}
	}
}

// TestPromptArgsAreTheDeclaredOnes holds promptArgs, whose values the
// trail keeps, to the prompts' definitions.
func TestPromptArgsAreTheDeclaredOnes(t *testing.T) {
	s, _ := promptServer(t, true)
	res, err := s.cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range res.Prompts {
		for _, a := range p.Arguments {
			got[p.Name] = append(got[p.Name], a.Name)
		}
	}
	if diff := cmp.Diff(promptArgs, got); diff != "" {
		t.Errorf("promptArgs (-code +definitions):\n%s", diff)
	}
}
