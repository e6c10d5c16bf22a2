package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ScriptStep is one step of a written trajectory. Exactly one of Tool,
// Policy and Answer is set:
//
//   - Tool: call this tool with Args; the result is bound to ID.
//   - Policy: compute values with a built-in policy (see Policies), bound
//     to ID; its explanation joins the assistant's next words.
//   - Answer: the final answer.
//
// Args, With, Say and Answer are templates: "{{ref}}" alone becomes the
// value itself, inside text its text. A ref is a dotted path from a step id
// ("risk47.data.identity.case_pack"); "{{ref | plain}}" unwraps
// untrusted-data markers. When is a ref that must be truthy ("!ref":
// falsy) for the step to run; a missing field is falsy.
type ScriptStep struct {
	ID     string         `json:"id,omitempty"`
	When   string         `json:"when,omitempty"`
	Say    string         `json:"say,omitempty"`
	Tool   string         `json:"tool,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
	Policy string         `json:"policy,omitempty"`
	With   map[string]any `json:"with,omitempty"`
	Answer string         `json:"answer,omitempty"`
}

// ScriptedModel replays a trajectory, deriving later arguments only from
// tool results in the conversation.
type ScriptedModel struct {
	steps    []ScriptStep
	pos      int
	bindings map[string]any
}

// NewScriptedModel checks a trajectory and returns a model that replays it.
func NewScriptedModel(steps []ScriptStep) (*ScriptedModel, error) {
	if err := validateTrajectory(steps); err != nil {
		return nil, err
	}
	return &ScriptedModel{steps: steps, bindings: map[string]any{}}, nil
}

func validateTrajectory(steps []ScriptStep) error {
	seen := map[string]bool{}
	for i, s := range steps {
		kinds := 0
		for _, set := range []bool{s.Tool != "", s.Policy != "", s.Answer != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return fmt.Errorf("step %d: exactly one of tool, policy and answer must be set", i+1)
		}
		if s.Policy != "" {
			if _, ok := Policies[s.Policy]; !ok {
				return fmt.Errorf("step %d: unknown policy %q", i+1, s.Policy)
			}
		}
		if (s.Tool != "" || s.Policy != "") && s.ID == "" {
			return fmt.Errorf("step %d: a tool or policy step needs an id, so later steps can refer to it", i+1)
		}
		if s.ID != "" {
			if seen[s.ID] {
				return fmt.Errorf("step %d: duplicate id %q", i+1, s.ID)
			}
			seen[s.ID] = true
		}
	}
	return nil
}

// Next binds the returned results, then plays steps until a tool call or
// the answer.
func (m *ScriptedModel) Next(_ context.Context, conversation []Message, _ []*mcp.Tool) (Message, error) {
	for _, msg := range conversation {
		if msg.Role != RoleTool || msg.ToolCallID == "" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(msg.Text), &v); err != nil {
			v = msg.Text
		}
		m.bindings[msg.ToolCallID] = v
	}
	var said []string
	for ; m.pos < len(m.steps); m.pos++ {
		s := m.steps[m.pos]
		if s.When != "" && !m.holds(s.When) {
			continue
		}
		if s.Say != "" {
			text, err := m.text(s.Say)
			if err != nil {
				return Message{}, fmt.Errorf("step %q: say: %w", s.ID, err)
			}
			said = append(said, text)
		}
		switch {
		case s.Policy != "":
			with, err := m.render(s.With)
			if err != nil {
				return Message{}, fmt.Errorf("step %q: with: %w", s.ID, err)
			}
			out, why, err := Policies[s.Policy](with.(map[string]any))
			if err != nil {
				return Message{}, fmt.Errorf("step %q: policy %s: %w", s.ID, s.Policy, err)
			}
			m.bindings[s.ID] = out
			if why != "" {
				said = append(said, why)
			}
		case s.Tool != "":
			args, err := m.render(s.Args)
			if err != nil {
				return Message{}, fmt.Errorf("step %q: args: %w", s.ID, err)
			}
			if args == nil {
				args = map[string]any{}
			}
			raw, err := json.Marshal(args)
			if err != nil {
				return Message{}, err
			}
			m.pos++
			return Message{Role: RoleAssistant, Text: strings.Join(said, "\n"), ToolCalls: []ToolCall{{ID: s.ID, Name: s.Tool, Arguments: raw}}}, nil
		default:
			text, err := m.text(s.Answer)
			if err != nil {
				return Message{}, fmt.Errorf("answer: %w", err)
			}
			m.pos = len(m.steps)
			return Message{Role: RoleAssistant, Text: strings.TrimSpace(strings.Join(append(said, text), "\n"))}, nil
		}
	}
	return Message{Role: RoleAssistant}, nil
}

// Bindings returns the values the model has derived so far, by step id.
func (m *ScriptedModel) Bindings() map[string]any { return m.bindings }

// Lookup follows a dotted ref through the bindings.
func (m *ScriptedModel) Lookup(ref string) (any, bool) { return lookup(m.bindings, ref) }

var (
	wholeRef = regexp.MustCompile(`^\{\{\s*([^{}|]+?)\s*(?:\|\s*(\w+)\s*)?\}\}$`)
	innerRef = regexp.MustCompile(`\{\{\s*([^{}|]+?)\s*(?:\|\s*(\w+)\s*)?\}\}`)
)

// render expands the templates inside a JSON-like value.
func (m *ScriptedModel) render(v any) (any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if sm := wholeRef.FindStringSubmatch(t); sm != nil {
			val, err := m.resolve(sm[1])
			if err != nil {
				return nil, err
			}
			return filter(val, sm[2])
		}
		return m.text(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := m.render(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := m.render(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return t, nil
	}
}

// text interpolates every {{ref}} of s as text.
func (m *ScriptedModel) text(s string) (string, error) {
	var firstErr error
	out := innerRef.ReplaceAllStringFunc(s, func(match string) string {
		sm := innerRef.FindStringSubmatch(match)
		val, err := m.resolve(sm[1])
		if err == nil {
			val, err = filter(val, sm[2])
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return match
		}
		return textOf(val)
	})
	return out, firstErr
}

func filter(v any, name string) (any, error) {
	switch name {
	case "":
		return v, nil
	case "plain":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("filter plain needs text, got %T", v)
		}
		t, _ := mcpserver.UntrustedText(s)
		return t, nil
	case "json":
		b, err := json.Marshal(v)
		return string(b), err
	default:
		return nil, fmt.Errorf("unknown filter %q", name)
	}
}

// resolve follows a dotted ref through the bindings.
func (m *ScriptedModel) resolve(ref string) (any, error) {
	v, ok := lookup(m.bindings, ref)
	if !ok {
		return nil, fmt.Errorf("%q is not available (skipped step, failed call or wrong path)", ref)
	}
	return v, nil
}

func lookup(bindings map[string]any, ref string) (any, bool) {
	parts := strings.Split(strings.TrimSpace(ref), ".")
	var cur any = bindings
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// holds evaluates a When condition.
func (m *ScriptedModel) holds(cond string) bool {
	neg := strings.HasPrefix(cond, "!")
	v, ok := lookup(m.bindings, strings.TrimPrefix(cond, "!"))
	return (ok && truthy(v)) != neg
}

func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case float64:
		return t != 0
	case int:
		return t != 0
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	default:
		return true
	}
}

func textOf(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatInt(int64(t), 10)
		}
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int:
		return strconv.Itoa(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

// Policy computes named values from its rendered inputs and explains the
// decision in a sentence.
type Policy func(with map[string]any) (out map[string]any, why string, err error)

// Policies are the scripted model's named decisions.
var Policies = map[string]Policy{
	"restock_gap":     restockGap,
	"confirm_preview": confirmPreview,
}

// restockGap is the butter scenario's rule: gap = sold minus on hand; order
// only above the threshold, the gap rounded up to whole cases. Inputs:
// store_id, sold, on_hand, case_pack, threshold. Outputs: gap, exceeds,
// quantity (0 when the gap is not positive), cases, case_pack.
func restockGap(with map[string]any) (map[string]any, string, error) {
	var missing []string
	num := func(name string) int64 {
		f, ok := with[name].(float64)
		if !ok {
			missing = append(missing, name)
		}
		return int64(f)
	}
	sold, onHand, casePack, threshold := num("sold"), num("on_hand"), num("case_pack"), num("threshold")
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, "", fmt.Errorf("needs numbers for %s", strings.Join(missing, ", "))
	}
	if casePack < 1 {
		casePack = 1
	}
	store := textOf(with["store_id"])
	gap := sold - onHand
	var cases, qty int64
	if gap > 0 {
		cases = (gap + casePack - 1) / casePack
		qty = cases * casePack
	}
	exceeds := gap > threshold
	var why string
	if exceeds {
		unit := "cases"
		if cases == 1 {
			unit = "case"
		}
		why = fmt.Sprintf("Store %s: %d sold in the last 24 h minus %d on hand = gap %d, which exceeds %d: order %d units (%d %s of %d, the gap rounded up to whole cases).",
			store, sold, onHand, gap, threshold, qty, cases, unit, casePack)
	} else {
		why = fmt.Sprintf("Store %s: %d sold in the last 24 h minus %d on hand = gap %d, which does not exceed %d: no order.",
			store, sold, onHand, gap, threshold)
	}
	return map[string]any{
		"store_id": store, "gap": float64(gap), "exceeds": exceeds, "quantity": float64(qty),
		"cases": float64(cases), "case_pack": float64(casePack), "why": why,
	}, why, nil
}

// confirmPreview confirms a preview only when writes are enabled, the
// quantity check passes and no order of the SKU is open. Input: preview.
// Outputs: confirm, idempotency_key.
func confirmPreview(with map[string]any) (map[string]any, string, error) {
	env, _ := with["preview"].(map[string]any)
	if env == nil {
		return nil, "", fmt.Errorf("needs the preview result")
	}
	no := func(why string) (map[string]any, string, error) {
		return map[string]any{"confirm": false, "idempotency_key": ""}, "Not confirming: " + why + ".", nil
	}
	if ok, _ := env["ok"].(bool); !ok {
		return no("the preview failed")
	}
	data, _ := env["data"].(map[string]any)
	if mode, _ := data["mode"].(string); mode != "preview" {
		return no(fmt.Sprintf("the answer is a %q, not a preview", mode))
	}
	if on, _ := data["writes_enabled"].(bool); !on {
		return no("writes are disabled on this deployment")
	}
	var verdict string
	var reasons []string
	if qc, ok := data["quantity_check"].(map[string]any); ok {
		verdict, _ = qc["verdict"].(string)
		for _, r := range asSlice(qc["reasons"]) {
			reasons = append(reasons, textOf(r))
		}
	}
	if verdict == "refuse" {
		return no("the quantity check refuses it (" + strings.Join(reasons, "; ") + ")")
	}
	if dup, _ := data["duplicate_warning"].(string); dup != "" {
		return no("an order of this SKU is already open here (" + dup + ")")
	}
	key, _ := data["idempotency_key"].(string)
	why := fmt.Sprintf("Confirming with the preview's idempotency key: the quantity check says %q", verdict)
	if len(reasons) > 0 {
		why += " (" + strings.Join(reasons, "; ") + ")"
	}
	why += ", and no order of this SKU is open here."
	return map[string]any{"confirm": true, "idempotency_key": key}, why, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
