package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolsListGoldenAndMeta(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
		o.Writes = &WriteOptions{MaxOrderUnits: 500}
	})
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestToolsListGoldenAndMeta -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
		t.Errorf("tools/list differs from %s (rerun with -update if intended):\n%s", golden, diff)
	}

	var names []string
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if !strings.HasPrefix(tool.Name, "korral_") || !snake.MatchString(tool.Name) {
			t.Errorf("%s: name must be korral_ + snake_case", tool.Name)
		}
		if tool.Title == "" || tool.Description == "" {
			t.Errorf("%s: title and description are required", tool.Name)
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations must be explicit (unset destructive/open-world hints mean true)", tool.Name)
		}
		schema := map[string]any{}
		b, _ := json.Marshal(tool.InputSchema)
		_ = json.Unmarshal(b, &schema)
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := schema[k]; ok {
				t.Errorf("%s: top-level %s in input schema", tool.Name, k)
			}
		}
		if schema["additionalProperties"] == nil {
			t.Errorf("%s: input schema must forbid unknown properties", tool.Name)
		}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			if !snake.MatchString(name) {
				t.Errorf("%s: property %s is not snake_case", tool.Name, name)
			}
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				t.Errorf("%s: property %s has no description", tool.Name, name)
			}
		}
	}
	want5 := []string{"korral_check_stock_risk", "korral_get_order_status", "korral_list_authorized_stores", "korral_list_recent_sales", "korral_raise_replenishment_order"}
	if diff := cmp.Diff(want5, names); diff != "" {
		t.Errorf("tool set: %s", diff)
	}
	for _, tool := range res.Tools {
		a := tool.Annotations
		write := tool.Name == "korral_raise_replenishment_order"
		if a.ReadOnlyHint == write || *a.DestructiveHint || a.IdempotentHint == write || !*a.OpenWorldHint {
			t.Errorf("%s: annotations %+v are not the honest ones", tool.Name, a)
		}
	}
}

// checkToolSnap holds one tool's definition, as tools/list gives it, to
// testdata/tools/NAME.golden.json, with the write path offered but off.
// -update or UPDATE_TOOLSNAPS=true rewrites the snapshot.
func checkToolSnap(t *testing.T, name string) {
	t.Helper()
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
		o.Writes = &WriteOptions{MaxOrderUnits: 500}
	})
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tool *mcp.Tool
	for _, tl := range res.Tools {
		if tl.Name == name {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatalf("%s: not in tools/list", name)
	}
	got, err := json.MarshalIndent(tool, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools", name+".golden.json")
	if *update || os.Getenv("UPDATE_TOOLSNAPS") == "true" {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
		t.Errorf("%s differs from %s (rerun with -update if intended):\n%s", name, golden, diff)
	}
}

func TestToolDefinitionsFitTheBudget(t *testing.T) {
	db := sharedLedger(t)
	for name, w := range map[string]*WriteOptions{
		"read-only":  nil,
		"writes off": {MaxOrderUnits: 500, Ledger: db},
		"writes on":  {MaxOrderUnits: 500, AllowWrites: true, Ledger: db},
		"approval":   {MaxOrderUnits: 500, AllowWrites: true, RequireApproval: true, Ledger: db},
		"host":       {MaxOrderUnits: 500, AllowWrites: true, HostConsent: testSealer(t), Ledger: db},
	} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2","311":"k3"}`), func(o *Options) { o.Writes = w })
		res, err := s.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		n := ModelVisibleBytes(res.Tools)
		whole, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		prompts, rendered := renderPrompts(t, s)
		if w != nil && len(prompts) != 2 || w == nil && len(prompts) != 1 {
			t.Fatalf("%s: %d prompts listed", name, len(prompts))
		}
		p := PromptBytes(prompts, rendered)
		t.Logf("%s: model-visible tool definitions %d bytes + prompts %d bytes = %d (budget %d), whole tools/list result %d bytes (budget %d)",
			name, n, p, n+p, ToolBudgetBytes, len(whole), ToolsListBudgetBytes)
		if n+p > ToolBudgetBytes {
			t.Errorf("%s: tool definitions and prompts cost %d bytes, budget %d", name, n+p, ToolBudgetBytes)
		}
		if len(whole) > ToolsListBudgetBytes {
			t.Errorf("%s: tools/list is %d bytes, budget %d", name, len(whole), ToolsListBudgetBytes)
		}
	}
}

// renderPrompts renders each prompt with every argument given (three stores
// for lists): the longest text of ordinary use.
func renderPrompts(t *testing.T, s session) ([]*mcp.Prompt, []*mcp.GetPromptResult) {
	t.Helper()
	ctx := context.Background()
	list, err := s.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]map[string]string{
		promptRestockGaps: {"sku": "8847291", "min_gap_units": "12", "store_ids": "47,102,311"},
		promptOrdersSince: {"sku": "8847291", "store_id": "47", "since": testNow.Add(-48 * time.Hour).Format(time.RFC3339)},
	}
	var out []*mcp.GetPromptResult
	for _, p := range list.Prompts {
		r, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args[p.Name]})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		out = append(out, r)
	}
	return list.Prompts, out
}

// TestReadOnlyDefinitionsSayNothingOfTheWritePath: under READ_ONLY no
// definition mentions the write tool, its arguments or outcomes.
func TestReadOnlyDefinitionsSayNothingOfTheWritePath(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1"}`), nil)
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Tools)
	for _, word := range []string{"korral_raise_replenishment_order", "confirm", "idempotency", "approval", "WRITE_OUTCOME_UNKNOWN", "pending_approval", "ledger"} {
		if strings.Contains(string(b), word) {
			t.Errorf("read-only tools/list mentions %q", word)
		}
	}
}
