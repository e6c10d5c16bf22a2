package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func promptServer(t *testing.T, writes bool) (session, *sqlite.DB) {
	t.Helper()
	db := sharedLedger(t)
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2","311":"k3"}`), func(o *Options) {
		if writes {
			o.Writes = &WriteOptions{MaxOrderUnits: 500, AllowWrites: true, Ledger: db, UpstreamID: "up-1"}
		}
	})
	return s, db
}

func getPrompt(t *testing.T, s session, name string, args map[string]string) (string, error) {
	t.Helper()
	r, err := s.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
		t.Fatalf("%s: want one user message, got %+v", name, r.Messages)
	}
	return r.Messages[0].Content.(*mcp.TextContent).Text, nil
}

// promptRefusal checks a prompt refused for its arguments: invalid params,
// with the taxonomy's code and a remediation.
func promptRefusal(t *testing.T, err error, code string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("want invalid params, got %v", err)
	}
	var data map[string]string
	if e := json.Unmarshal(je.Data, &data); e != nil || data["code"] != code || data["remediation"] == "" {
		t.Fatalf("want code %s with a remediation in data, got %s (%v)", code, je.Data, e)
	}
	if !strings.HasPrefix(je.Message, code+": ") {
		t.Fatalf("message %q does not start with %s", je.Message, code)
	}
}

func TestPromptsListedInTheConvention(t *testing.T) {
	for _, writes := range []bool{false, true} {
		s, _ := promptServer(t, writes)
		res, err := s.cs.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		snake := regexp.MustCompile(`^korral_[a-z0-9_]+$`)
		for _, p := range res.Prompts {
			names = append(names, p.Name)
			if !snake.MatchString(p.Name) || p.Title == "" || p.Description == "" {
				t.Errorf("%s: want a korral_ snake_case name, a title and a description", p.Name)
			}
			for _, a := range p.Arguments {
				if !regexp.MustCompile(`^[a-z_]+$`).MatchString(a.Name) || a.Description == "" {
					t.Errorf("%s: argument %q needs a snake_case name and a description", p.Name, a.Name)
				}
			}
		}
		// The orders prompt reads the ledger: a read-only server has none.
		want := []string{promptRestockGaps}
		if writes {
			want = []string{promptOrdersSince, promptRestockGaps}
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("writes %v: prompts (-want +got):\n%s", writes, diff)
		}
		if writes {
			checkGolden(t, filepath.Join("testdata", "prompts.golden.json"), res.Prompts)
		}
	}
}

// checkGolden compares v, as indented JSON, with a golden file that
// -update rewrites.
func checkGolden(t *testing.T, golden string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestPromptsListedInTheConvention -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (rerun with -update if intended):\n%s", golden, diff)
	}
}

func TestRestockGapsPrompt(t *testing.T) {
	s, _ := promptServer(t, true)
	text, err := getPrompt(t, s, promptRestockGaps, map[string]string{"sku": "8847291", "min_gap_units": "12", "store_ids": "102, 47,102"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"korral_check_stock_risk", "SKU 8847291", "stores 102,47.", "units_sold_last_24h minus on_hand_units; where it exceeds 12", "korral_raise_replenishment_order", "Send nothing until I agree"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q: %s", want, text)
		}
	}
	// Without store_ids, or with "all": the chain sweep.
	for _, stores := range []string{"", "all", " all "} {
		text, err = getPrompt(t, s, promptRestockGaps, map[string]string{"sku": "8847291", "min_gap_units": "0", "store_ids": stores})
		if err != nil || !strings.Contains(text, `store_ids ["all"]`) || !strings.Contains(text, "sweep.more_at_risk") || strings.Contains(text, "at stores") {
			t.Fatalf("store_ids %q: %v %s", stores, err, text)
		}
	}
	// A read-only server cannot order, and the prompt does not ask it to.
	ro, _ := promptServer(t, false)
	text, err = getPrompt(t, ro, promptRestockGaps, map[string]string{"sku": "8847291", "min_gap_units": "3"})
	if err != nil || strings.Contains(text, "korral_raise_replenishment_order") {
		t.Fatalf("read-only: %v %s", err, text)
	}

	for name, c := range map[string]struct {
		args map[string]string
		code string
	}{
		"sku letters":      {map[string]string{"sku": "butter", "min_gap_units": "3"}, "INVALID_ARGUMENT"},
		"sku missing":      {map[string]string{"min_gap_units": "3"}, "INVALID_ARGUMENT"},
		"gap not a number": {map[string]string{"sku": "8847291", "min_gap_units": "a dozen"}, "INVALID_ARGUMENT"},
		"gap negative":     {map[string]string{"sku": "8847291", "min_gap_units": "-1"}, "INVALID_ARGUMENT"},
		"foreign store":    {map[string]string{"sku": "8847291", "min_gap_units": "3", "store_ids": "47,999"}, "STORE_NOT_AUTHORIZED"},
		"store not digits": {map[string]string{"sku": "8847291", "min_gap_units": "3", "store_ids": "Praha"}, "INVALID_ARGUMENT"},
		"all and a store":  {map[string]string{"sku": "8847291", "min_gap_units": "3", "store_ids": "47,all"}, "INVALID_ARGUMENT"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := getPrompt(t, s, promptRestockGaps, c.args)
			promptRefusal(t, err, c.code)
		})
	}
}

func TestOrdersSincePrompt(t *testing.T) {
	s, db := promptServer(t, true)
	putEntry(t, db, "key-raised-0001", "47", 24, state.StateRaised, "up-1", "RO-47-000001")
	putEntry(t, db, "key-unknown-0002", "47", 12, state.StateUnknown, "up-1", "")
	putEntry(t, db, "key-other-up-0003", "47", 36, state.StateRaised, "up-2", "RO-47-000009")
	putEntry(t, db, "key-store-102-0004", "102", 48, state.StateRaised, "up-1", "RO-102-000001")
	text, err := getPrompt(t, s, promptOrdersSince, map[string]string{"sku": "8847291", "store_id": "47",
		"since": testNow.Add(-48 * time.Hour).Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RO-47-000001: 24 units, raised", "key-unknown-0002: 12 units, unknown", "korral_get_order_status"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Another StoreLink's order and another store's are not this question's.
	for _, not := range []string{"RO-47-000009", "RO-102-000001"} {
		if strings.Contains(text, not) {
			t.Errorf("text names %s:\n%s", not, text)
		}
	}
	// A window after the orders finds none, and says so.
	text, err = getPrompt(t, s, promptOrdersSince, map[string]string{"sku": "8847291", "store_id": "47",
		"since": testNow.Add(-time.Minute).Format(time.RFC3339)})
	if err != nil || !strings.Contains(text, "recorded no order") {
		t.Fatalf("empty window: %v %s", err, text)
	}

	for name, c := range map[string]struct {
		args map[string]string
		code string
	}{
		"no store of three": {map[string]string{"sku": "8847291"}, "STORE_ID_REQUIRED"},
		"foreign store":     {map[string]string{"sku": "8847291", "store_id": "999"}, "STORE_NOT_AUTHORIZED"},
		"since garbage":     {map[string]string{"sku": "8847291", "store_id": "47", "since": "yesterday"}, "INVALID_ARGUMENT"},
		"since in future":   {map[string]string{"sku": "8847291", "store_id": "47", "since": testNow.Add(time.Hour).Format(time.RFC3339)}, "INVALID_ARGUMENT"},
		"since too far":     {map[string]string{"sku": "8847291", "store_id": "47", "since": testNow.AddDate(0, -2, 0).Format(time.DateOnly)}, "INVALID_ARGUMENT"},
		"sku bad":           {map[string]string{"sku": "88", "store_id": "47"}, "INVALID_ARGUMENT"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := getPrompt(t, s, promptOrdersSince, c.args)
			promptRefusal(t, err, c.code)
		})
	}
}

func TestPromptCompletionOffersKeyringStores(t *testing.T) {
	s, _ := promptServer(t, true)
	complete := func(prompt, arg, value string) []string {
		t.Helper()
		r, err := s.cs.Complete(context.Background(), &mcp.CompleteParams{
			Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt}, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Completion.Values
	}
	for _, c := range []struct {
		prompt, arg, value string
		want               []string
	}{
		{promptOrdersSince, "store_id", "", []string{"102", "311", "47"}},
		{promptOrdersSince, "store_id", "3", []string{"311"}},
		{promptRestockGaps, "store_ids", "47,1", []string{"47,102"}},
		{promptRestockGaps, "store_ids", "47,", []string{"47,102", "47,311"}},
		// No known values: an empty list, not an error.
		{promptRestockGaps, "sku", "88", []string{}},
		{promptOrdersSince, "store_id", "x", []string{}},
		{"test_prompt_with_arguments", "arg1", "par", []string{}},
	} {
		got := complete(c.prompt, c.arg, c.value)
		// The keyring's order is its own; compare as sets.
		if diff := cmp.Diff(sorted(c.want), sorted(got)); diff != "" {
			t.Errorf("%s %s=%q: (-want +got):\n%s", c.prompt, c.arg, c.value, diff)
		}
	}
}

func sorted(v []string) []string {
	out := append([]string{}, v...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestCapabilitiesAreWhatIsServed: the server declares tools, prompts,
// completions and resources (ADR 0020), none with list-change
// notifications; each declared one answers.
func TestCapabilitiesAreWhatIsServed(t *testing.T) {
	s, _ := promptServer(t, true)
	caps := s.cs.InitializeResult().Capabilities
	b, _ := json.Marshal(caps)
	if diff := cmp.Diff(`{"completions":{},"logging":{},"prompts":{},"resources":{},"tools":{}}`, string(b)); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools declared, tools/list: %v", err)
	}
	if _, err := s.cs.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts declared, prompts/list: %v", err)
	}
	// The resources are the two views, for every client.
	if r, err := s.cs.ListResources(ctx, nil); err != nil {
		t.Errorf("resources/list: %v", err)
	} else if len(r.Resources) != 2 {
		t.Errorf("resources/list: %d resources", len(r.Resources))
	}
	if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"}); err == nil {
		t.Errorf("resources/read answered for a resource the server does not have")
	}
}
