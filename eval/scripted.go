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
// Policy, Ask and Answer is set:
//
//   - Tool: call this tool with Args; the result is bound to ID.
//   - Policy: compute values with a built-in policy (see Policies), bound
//     to ID; its explanation joins the assistant's next words.
//   - Ask: end the turn with a question to the buyer; the buyer's reply is
//     bound to ID as {question, reply, yes} (yes: the reply starts with
//     "yes").
//   - Answer: the final answer.
//
// Args, With, Say, Ask and Answer are templates: "{{ref}}" alone becomes
// the value itself, inside text its text. A ref is a dotted path from a
// step id ("risk47.data.identity.case_pack"); "{{ref | plain}}" unwraps
// untrusted-data markers; "{{ref?}}" is null (inside text, empty) where
// "{{ref}}" would fail for a skipped step. When is a ref that must be truthy ("!ref":
// falsy) for the step to run, or several joined by "||", one of which must
// hold; a missing field is falsy.
type ScriptStep struct {
	ID     string         `json:"id,omitempty"`
	When   string         `json:"when,omitempty"`
	Say    string         `json:"say,omitempty"`
	Tool   string         `json:"tool,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
	Policy string         `json:"policy,omitempty"`
	With   map[string]any `json:"with,omitempty"`
	Ask    string         `json:"ask,omitempty"`
	Answer string         `json:"answer,omitempty"`
}

// ScriptedModel replays a trajectory, deriving later arguments only from
// tool results in the conversation.
type ScriptedModel struct {
	steps    []ScriptStep
	pos      int
	bindings map[string]any
	// asked is the id of the ask step awaiting the buyer's reply.
	asked string
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
		for _, set := range []bool{s.Tool != "", s.Policy != "", s.Ask != "", s.Answer != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return fmt.Errorf("step %d: exactly one of tool, policy, ask and answer must be set", i+1)
		}
		if s.Policy != "" {
			if _, ok := Policies[s.Policy]; !ok {
				return fmt.Errorf("step %d: unknown policy %q", i+1, s.Policy)
			}
		}
		if (s.Tool != "" || s.Policy != "" || s.Ask != "") && s.ID == "" {
			return fmt.Errorf("step %d: a tool, policy or ask step needs an id, so later steps can refer to it", i+1)
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
	if m.asked != "" {
		m.bindReply(conversation)
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
		case s.Ask != "":
			question, err := m.text(s.Ask)
			if err != nil {
				return Message{}, fmt.Errorf("step %q: ask: %w", s.ID, err)
			}
			m.bindings[s.ID] = map[string]any{"question": question}
			m.asked = s.ID
			m.pos++
			return Message{Role: RoleAssistant, Text: strings.Join(append(said, question), "\n"), Asks: true}, nil
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
			// A part left empty ("{{ref?}}") leaves no double space.
			text = strings.Join(strings.Fields(text), " ")
			return Message{Role: RoleAssistant, Text: strings.TrimSpace(strings.Join(append(said, text), "\n"))}, nil
		}
	}
	return Message{Role: RoleAssistant}, nil
}

// bindReply binds the buyer's last message to the pending ask step.
func (m *ScriptedModel) bindReply(conversation []Message) {
	reply := ""
	for i := len(conversation) - 1; i >= 0; i-- {
		if conversation[i].Role == RoleUser {
			reply = conversation[i].Text
			break
		}
	}
	b, _ := m.bindings[m.asked].(map[string]any)
	if b == nil {
		b = map[string]any{}
	}
	b["reply"] = reply
	b["yes"] = strings.HasPrefix(strings.ToLower(strings.TrimSpace(reply)), "yes")
	m.bindings[m.asked] = b
	m.asked = ""
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
		if val == nil && strings.HasSuffix(sm[1], "?") {
			return ""
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

// resolve follows a dotted ref through the bindings; a ref ending in "?"
// is null when missing.
func (m *ScriptedModel) resolve(ref string) (any, error) {
	optional := strings.HasSuffix(ref, "?")
	ref = strings.TrimSuffix(ref, "?")
	v, ok := lookup(m.bindings, ref)
	if !ok && optional {
		return nil, nil
	}
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

// holds evaluates a When condition: one ref, or several joined by "||".
func (m *ScriptedModel) holds(cond string) bool {
	for _, c := range strings.Split(cond, "||") {
		c = strings.TrimSpace(c)
		neg := strings.HasPrefix(c, "!")
		v, ok := lookup(m.bindings, strings.TrimPrefix(c, "!"))
		if (ok && truthy(v)) != neg {
			return true
		}
	}
	return false
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
	"order_report":    orderReport,
}

// orderReport is one store's order in a sentence for the final answer.
// Inputs (each may be null): store_id, question (the ask step), status (the
// order read back). Output: text, "" when nothing was asked or sent.
func orderReport(with map[string]any) (map[string]any, string, error) {
	store := textOf(with["store_id"])
	asked, _ := with["question"].(map[string]any)
	st, _ := with["status"].(map[string]any)
	data, _ := st["data"].(map[string]any)
	var text string
	switch {
	case data != nil:
		text = fmt.Sprintf("order %s for store %s: %s units, status %s, expected %s.", textOf(data["order_id"]), store,
			textOf(data["quantity_units"]), textOf(data["status"]), textOf(data["expected_arrival"]))
		if asked != nil {
			text = fmt.Sprintf("You answered %q to the quantity check's question, so I raised ", textOf(asked["reply"])) + text
		} else {
			text = "Raised " + text
		}
	case asked != nil:
		text = fmt.Sprintf("Nothing was sent for store %s: you answered %q.", store, textOf(asked["reply"]))
	}
	return map[string]any{"text": text}, "", nil
}

// restockGap is the butter scenario's rule: gap = sold minus on hand; order
// only above the threshold, the gap rounded up to whole cases. Inputs:
// store_id, sold, on_hand, case_pack, threshold, and optionally the store's
// headline from the risk answer, which the explanation carries so that a
// store without an order is told why in the answer's words. Outputs: gap,
// exceeds, quantity (0 when the gap is not positive), cases, case_pack, why.
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
	if h, ok := with["headline"].(string); ok && h != "" {
		why += " StoreLink's stock check for it: " + h
	}
	return map[string]any{
		"store_id": store, "gap": float64(gap), "exceeds": exceeds, "quantity": float64(qty),
		"cases": float64(cases), "case_pack": float64(casePack), "why": why,
	}, why, nil
}

// confirmPreview confirms a preview only when writes are enabled, the
// quantity check says ok and no order of the SKU is open. At "review" it
// asks the buyer instead (ask, question), keeping the preview's key for a
// confirmation the buyer gives. Input: preview. Outputs: confirm, ask,
// question, idempotency_key.
func confirmPreview(with map[string]any) (map[string]any, string, error) {
	env, _ := with["preview"].(map[string]any)
	if env == nil {
		return nil, "", fmt.Errorf("needs the preview result")
	}
	no := func(why string) (map[string]any, string, error) {
		return map[string]any{"confirm": false, "ask": false, "idempotency_key": ""}, "Not confirming: " + why + ".", nil
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
	because := ""
	if len(reasons) > 0 {
		because = " (" + strings.Join(reasons, "; ") + ")"
	}
	if verdict != "ok" {
		qty := textOf(get(data, "request.body.quantity_units"))
		question := fmt.Sprintf("The quantity check says %q%s. Shall I send the %s units anyway? Nothing is sent until you say yes.", verdict, because, qty)
		return map[string]any{"confirm": false, "ask": true, "question": question, "idempotency_key": key},
			fmt.Sprintf("Not confirming on my own: the quantity check says %q, so the buyer decides.", verdict), nil
	}
	why := "Confirming with the preview's idempotency key: the quantity check says \"ok\"" + because + ", and no order of this SKU is open here."
	return map[string]any{"confirm": true, "ask": false, "idempotency_key": key}, why, nil
}

// get follows a dotted path through nested objects.
func get(m map[string]any, path string) any {
	v, _ := lookup(map[string]any{"": m}, "."+path)
	return v
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
