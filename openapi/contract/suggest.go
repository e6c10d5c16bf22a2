package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/korral/storelink/openapi"
)

// SpecPath is the contract's path in the repository.
const SpecPath = "openapi/storelink.yaml"

// suggestComment starts the YAML comment line above every place Suggest
// changes.
const suggestComment = "# suggested from findings: "

// addedDescription is the placeholder description of what Suggest adds.
const addedDescription = "Added from StoreLink's answers; describe it."

// Suggestion is a proposed change of the contract built from the causes of
// a check or a proxy run, for a person to review.
type Suggestion struct {
	// Patched is the whole contract with the proposed changes; it passes
	// openapi.Parse.
	Patched []byte
	// Diff is a unified diff (patch -p1) from the contract to Patched;
	// empty when nothing is proposed.
	Diff string
	// Proposals are the changes made, one per cause, in the causes' order.
	Proposals []Proposal
	// Notes are the causes left without a change, with the reason.
	Notes []Note
}

// Proposal is one change Suggest made to the contract.
type Proposal struct {
	// CauseID is the ID of the cause the change comes from.
	CauseID string
	// Change says what changes, in one line.
	Change string
	// Evidence says what the findings saw, in one line; it is also the
	// YAML comment above the change.
	Evidence string
}

// Note is a cause Suggest did not turn into a change, and why.
type Note struct {
	CauseID string
	Why     string
}

// ReadCauses reads the causes of a check report (check --format json) or
// of proxy findings (the last summary line).
func ReadCauses(r io.Reader) ([]Cause, error) {
	const want = `want a check report (a JSON object with "causes", from check --format json) or proxy findings (JSON lines ending in a "type":"summary" line)`
	dec := json.NewDecoder(r)
	var values []map[string]json.RawMessage
	for {
		var v map[string]json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read findings: value %d is not a JSON object (%v): %s", len(values)+1, err, want)
		}
		values = append(values, v)
	}
	decode := func(raw json.RawMessage) ([]Cause, error) {
		var cs []Cause
		if len(raw) == 0 {
			return nil, nil
		}
		if err := json.Unmarshal(raw, &cs); err != nil {
			return nil, fmt.Errorf("read findings: causes: %v", err)
		}
		return cs, nil
	}
	typeOf := func(v map[string]json.RawMessage) string {
		var t string
		_ = json.Unmarshal(v["type"], &t)
		return t
	}
	if len(values) == 1 && typeOf(values[0]) != "summary" {
		v := values[0]
		if raw, ok := v["causes"]; ok {
			return decode(raw)
		}
		if _, ok := v["probes"]; ok {
			return nil, nil // a report without drift
		}
		return nil, fmt.Errorf("read findings: a JSON object without \"causes\": %s", want)
	}
	for i := len(values) - 1; i >= 0; i-- {
		if typeOf(values[i]) == "summary" {
			var sum struct {
				Causes json.RawMessage `json:"causes"`
			}
			if raw, ok := values[i]["summary"]; ok && json.Unmarshal(raw, &sum) == nil && sum.Causes != nil {
				return decode(sum.Causes)
			}
			return decode(values[i]["causes"])
		}
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("read findings: empty: %s", want)
	}
	return nil, fmt.Errorf("read findings: %d JSON lines without a \"type\":\"summary\" line (was the proxy stopped cleanly?): %s", len(values), want)
}

// Suggest proposes a contract change for each cause it can: a rename, an
// added or optional property, a declared status, a relaxed pattern. It
// edits spec line by line, keeping other lines byte for byte, comments each
// change, and keeps only changes that pass openapi.Parse. It never writes a
// value StoreLink sent.
func Suggest(spec []byte, causes []Cause) (*Suggestion, error) {
	doc, err := openapi.Parse(spec)
	if err != nil {
		return nil, err
	}
	s := &suggester{doc: doc, lines: splitLines(spec), causes: causes}
	out := &Suggestion{}
	for i, c := range causes {
		change, evidence, why := s.propose(i, c)
		if why != "" {
			out.Notes = append(out.Notes, Note{CauseID: c.ID, Why: why})
			continue
		}
		out.Proposals = append(out.Proposals, Proposal{CauseID: c.ID, Change: change, Evidence: evidence})
	}
	out.Patched = []byte(strings.Join(s.lines, ""))
	if _, err := openapi.Parse(out.Patched); err != nil {
		return nil, fmt.Errorf("suggest: the patched contract does not validate: %w", err)
	}
	out.Diff = unifiedDiff(splitLines(spec), s.lines, SpecPath)
	return out, nil
}

// suggester holds the contract while Suggest edits it.
type suggester struct {
	doc    *openapi3.T // the contract as given, for its schemas
	lines  []string    // the text, each line with its line ending
	causes []Cause
}

// edit is one cause's pending change of the text.
type edit struct {
	lines   []string
	changed map[int]bool // lines (of lines) changed or added
}

func (s *suggester) begin() *edit {
	return &edit{lines: slices.Clone(s.lines), changed: map[int]bool{}}
}

// set replaces line i.
func (e *edit) set(i int, line string) {
	if e.lines[i] != line {
		e.lines[i] = line
		e.changed[i] = true
	}
}

// insert puts new lines before line i.
func (e *edit) insert(i int, add ...string) {
	e.lines = slices.Insert(e.lines, i, add...)
	moved := map[int]bool{}
	for k := range e.changed {
		if k >= i {
			k += len(add)
		}
		moved[k] = true
	}
	for k := range add {
		moved[i+k] = true
	}
	e.changed = moved
}

// remove deletes line i.
func (e *edit) remove(i int) {
	e.lines = slices.Delete(e.lines, i, i+1)
	moved := map[int]bool{}
	for k := range e.changed {
		switch {
		case k > i:
			moved[k-1] = true
		case k < i:
			moved[k] = true
		}
	}
	e.changed = moved
}

// commit puts the comment above every changed place and keeps the edit if
// the document still passes openapi.Parse; otherwise it returns why not.
func (s *suggester) commit(e *edit, evidence string) error {
	comment := suggestComment + oneLine(evidence)
	at := slices.Sorted(maps.Keys(e.changed))
	for k := len(at) - 1; k >= 0; k-- {
		i := at[k]
		if k > 0 && at[k-1] == i-1 && !isComment(e.lines[i-1]) {
			continue // one comment above a run of changed lines
		}
		ind := 0
		if i < len(e.lines) {
			ind = indentOf(e.lines[i])
		} else if i > 0 {
			ind = indentOf(e.lines[i-1])
		}
		e.lines = slices.Insert(e.lines, i, strings.Repeat(" ", ind)+comment+"\n")
	}
	if _, err := openapi.Parse([]byte(strings.Join(e.lines, ""))); err != nil {
		return err
	}
	s.lines = e.lines
	return nil
}

// propose turns cause i into a change, or says why not.
func (s *suggester) propose(i int, c Cause) (change, evidence, why string) {
	if c.Assumption {
		return "", "", "stands only on an assumption of the check, not on the contract: nothing to change in the spec"
	}
	switch {
	case c.Kind == FindingRename:
		return s.rename(c)
	case c.Kind == FindingUndeclaredStatus:
		return s.declareStatus(c)
	case c.Kind == FindingLocalTime:
		return s.declareLocalTimes(c)
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/additionalProperties"):
		if j := s.pairedRename(i, c, true); j >= 0 {
			return "", "", fmt.Sprintf("part of the rename %s", s.causes[j].ID)
		}
		return s.addProperty(c)
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/required"):
		if j := s.pairedRename(i, c, false); j >= 0 {
			return "", "", fmt.Sprintf("part of the rename %s", s.causes[j].ID)
		}
		return s.makeOptional(c)
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/pattern"):
		return s.relaxPattern(c)
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/enum"):
		return "", "", "values are not copied from StoreLink's answers: read the allowed values from StoreLink's documentation and add them by hand"
	case c.Kind == FindingSchema:
		return "", "", "a type or bound the contract states: relax it from StoreLink's documentation, not from its answers"
	case c.Kind == FindingStatus:
		return "", "", "the status is declared: which one a request calls for is the contract's rule; fix StoreLink, or change the rule by hand"
	case c.Kind == FindingRule:
		return "", "", fmt.Sprintf("semantic rule %s: the schema cannot state it; fix StoreLink, or change the rule in storelinkclient/rules and x-korral-rules by hand", safeName(c.Rule))
	case c.Kind == FindingGenerated:
		return "", "", fmt.Sprintf("generated case (%s): the contract's rule stands; fix StoreLink, or change the contract by hand", safeName(c.Rule))
	case c.Kind == FindingErrorIn200:
		return "", "", "StoreLink's known quirk (an error body under a success status): the contract forbids it on purpose; StoreLink must fix it"
	case c.Kind == FindingHeader:
		return "", "", "a header StoreLink sends or omits: not turned into a spec change; check it by hand"
	case c.Kind == FindingBody:
		return "", "", "the body is not valid JSON: nothing in the spec to change"
	case c.Kind == FindingRequestField && c.Evidence != nil && c.Evidence.Property != "":
		return "", "", fmt.Sprintf("StoreLink refuses the request property %s.%s and names none in its place: read StoreLink's documentation for the request body and change %s by hand", safeName(c.Evidence.Component), safeName(c.Evidence.Property), safeName(c.Evidence.Component))
	case c.Kind == FindingRequestField:
		return "", "", "StoreLink requires a request property the contract does not declare, and no property the request sent pairs with it: the contract cannot send a value it does not know; add it by hand from StoreLink's documentation"
	case c.Kind == FindingRequest:
		return "", "", "a request broke the contract: a bug of the caller or the check, not drift of StoreLink"
	}
	return "", "", fmt.Sprintf("kind %q is not turned into a spec change", safeName(c.Kind))
}

// pairedRename finds a rename among the causes that explains cause i.
func (s *suggester) pairedRename(i int, c Cause, added bool) int {
	comp := componentOf(c)
	name := ""
	if c.Evidence != nil {
		name = c.Evidence.Property
		if added {
			name = c.Evidence.Found
		}
	}
	if name == "" {
		name = lastToken(c.Path)
	}
	for j, r := range s.causes {
		if j == i || r.Kind != FindingRename || r.Assumption || r.Evidence == nil || r.Evidence.Component != comp {
			continue
		}
		if (added && r.Evidence.Found == name) || (!added && r.Evidence.Property == name) {
			return j
		}
	}
	return -1
}

// seen is the start of every evidence line: how often and where.
func seen(c Cause) string {
	var ops []string
	for _, op := range c.Operations {
		if safeName(op) == op && op != "" {
			ops = append(ops, op)
		}
	}
	times := "times"
	if c.Count == 1 {
		times = "time"
	}
	where := ""
	switch len(ops) {
	case 0:
	case 1:
		where = " in " + ops[0]
	default:
		where = " in " + strings.Join(ops[:len(ops)-1], ", ") + " and " + ops[len(ops)-1]
	}
	return fmt.Sprintf("seen %d %s%s", max(c.Count, 1), times, where)
}

// component is the schema component name, or nil.
func (s *suggester) component(name string) *openapi3.Schema {
	if s.doc.Components == nil {
		return nil
	}
	if ref := s.doc.Components.Schemas[name]; ref != nil {
		return ref.Value
	}
	return nil
}

// componentOf is the component a cause is about.
func componentOf(c Cause) string {
	if c.Evidence != nil && c.Evidence.Component != "" {
		return c.Evidence.Component
	}
	t := pointerTokens(c.Schema)
	if len(t) >= 3 && t[0] == "components" && t[1] == "schemas" {
		return t[2]
	}
	return ""
}

// pointerTokens splits a "#/a/b" location into its unescaped tokens.
func pointerTokens(loc string) []string {
	loc = strings.TrimPrefix(loc, "#")
	if !strings.HasPrefix(loc, "/") {
		return nil
	}
	t := strings.Split(loc[1:], "/")
	for i := range t {
		t[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t[i])
	}
	return t
}

// lastToken is the last token of a JSON Pointer.
func lastToken(p string) string {
	t := pointerTokens("#" + p)
	if len(t) == 0 {
		return ""
	}
	return t[len(t)-1]
}
