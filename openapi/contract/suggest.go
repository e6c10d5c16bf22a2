package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/korral/storelink/openapi"
)

// SpecPath is the contract's path in the repository, as a suggested patch
// names it.
const SpecPath = "openapi/storelink.yaml"

// suggestComment starts the YAML comment line above every place Suggest
// changes.
const suggestComment = "# suggested from findings: "

// addedDescription is the description of a property or response Suggest
// adds: a person has to write the real one.
const addedDescription = "Added from StoreLink's answers; describe it."

// Suggestion is a proposed change of the contract built from the causes of
// a check or a proxy run, for a person to review.
type Suggestion struct {
	// Patched is the whole contract with the proposed changes; it passes
	// openapi.Parse.
	Patched []byte
	// Diff is a unified diff from the contract to Patched, as
	// a/openapi/storelink.yaml and b/openapi/storelink.yaml (patch -p1,
	// git apply). It is empty when nothing is proposed.
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
	// Change says what changes, in one line, e.g. "rename
	// Supplier.minimum_order_units to min_order_qty".
	Change string
	// Evidence says what the findings saw, in one line; it is also the
	// comment above every changed place.
	Evidence string
}

// Note is a cause Suggest did not turn into a change, and why.
type Note struct {
	CauseID string
	Why     string
}

// ReadCauses reads the causes of a check report (a JSON object with
// "causes", from check --format json) or of proxy findings (JSON lines;
// the causes are those of the last line with "type":"summary", under its
// "summary").
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
			// The proxy writes its summary under "summary".
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

// Suggest proposes a change of the contract spec for each cause it can
// turn into one: a renamed property, an added property, a missing one made
// optional, an undeclared status declared, a pattern relaxed to take a new
// shape. It edits spec's text line by line, keeping every other line byte
// for byte, puts a comment naming the evidence above each changed place,
// and checks that the result passes openapi.Parse (a change that would not
// is left as a note). It never writes a value StoreLink sent: only
// property names, types, formats, statuses, character classes and lengths.
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

// pairedRename finds a rename among the causes that explains cause i:
// the same component and, for an added property, the same new name, for a
// missing one the same old name.
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

// rename renames a property of a component: its key, its entry in
// required and its key in the examples that hold the component.
func (s *suggester) rename(c Cause) (change, evidence, why string) {
	ev := c.Evidence
	if ev == nil || ev.Component == "" || ev.Property == "" || ev.Found == "" {
		return "", "", "a rename without its component, old and new name: nothing to build a change from"
	}
	if !isPropertyName(ev.Found) || !isPropertyName(ev.Property) || !isPropertyName(ev.Component) {
		return "", "", "the names are not plain property names: change the spec by hand"
	}
	comp := s.component(ev.Component)
	if comp == nil {
		return "", "", fmt.Sprintf("the contract has no schema component %s", ev.Component)
	}
	if comp.Properties[ev.Property] == nil {
		return "", "", fmt.Sprintf("%s has no property %s (already changed?)", ev.Component, ev.Property)
	}
	if comp.Properties[ev.Found] != nil {
		return "", "", fmt.Sprintf("%s already has a property %s", ev.Component, ev.Found)
	}
	doubts := addDoubts(renameDoubts(comp.Properties[ev.Property], ev.Property, ev.Found, ev.JSONType, ev.Format), ev.Against...)
	if len(doubts) > 0 {
		return "", "", s.review(c, doubts)
	}
	evidence = fmt.Sprintf("%s: renamed? %s present, %s missing", seen(c), ev.Found, ev.Property)
	change = fmt.Sprintf("rename %s.%s to %s", ev.Component, ev.Property, ev.Found)
	e := s.begin()
	goName, err := s.renameProperty(e, ev.Component, ev.Property, ev.Found)
	if err != nil {
		return "", "", "the rename would not validate: " + firstLine(err.Error())
	}
	s.renameRequired(e, ev.Component, ev.Property, ev.Found)
	s.renameInExamples(e, comp, ev.Property, ev.Found)
	evidence += "; the Go field keeps its name " + goName
	if err := s.commit(e, evidence); err != nil {
		return "", "", "the rename would not validate: " + firstLine(err.Error())
	}
	return change + " (Go field " + goName + ")", evidence, ""
}

// review leaves a rename that something speaks against to a person: it
// puts comment lines above the declared property that name both fields
// side by side, what speaks against the rename and what to decide, and
// changes nothing else. It returns the note's text.
func (s *suggester) review(c Cause, doubts []string) string {
	ev := c.Evidence
	var clean []string
	for _, d := range doubts {
		if d = oneLine(d); d != "" && len(d) <= 300 {
			clean = append(clean, d)
		}
	}
	side := fmt.Sprintf("StoreLink sends %s where the contract declares %s.%s", ev.Found, ev.Component, ev.Property)
	against := "against a rename: " + strings.Join(clean, "; ")
	decide := fmt.Sprintf("decide whether %s is %s in other terms (then change the property's name, type, unit, bounds and description by hand, "+
		"with x-go-name: %s) or another field (then add it, and make %s optional if StoreLink never sends it)",
		ev.Found, ev.Property, keepGoName(ev.Property), ev.Property)
	why := "review, not renamed: " + side + "; " + against + "; " + decide
	e := s.begin()
	if props, ok := find(e.lines, "components", "schemas", ev.Component, "properties"); ok {
		if i, ok := child(e.lines, props, ev.Property); ok {
			pad := strings.Repeat(" ", indentOf(e.lines[i]))
			e.insert(i,
				pad+"# review, not renamed ("+seen(c)+"): "+side+".\n",
				pad+"# "+strings.ToUpper(against[:1])+against[1:]+".\n",
				pad+"# "+strings.ToUpper(decide[:1])+decide[1:]+".\n")
			if _, err := openapi.Parse([]byte(strings.Join(e.lines, ""))); err == nil {
				s.lines = e.lines
			}
		}
	}
	return why
}

// renameProperty renames the key of a property and keeps its Go field
// name: it gives the property an x-go-name with the name oapi-codegen gave
// the old property (keepGoName), unless it has one already, so that the
// code that reads the field compiles unchanged after make generate. A
// property that is a bare $ref gets its reference under allOf, since a
// $ref's siblings are ignored in OpenAPI 3.0 (and Spectral refuses them);
// oapi-codegen generates the referenced type for a one-item allOf. It
// returns the Go field name kept.
func (s *suggester) renameProperty(e *edit, comp, old, name string) (string, error) {
	props, ok := find(e.lines, "components", "schemas", comp, "properties")
	if !ok {
		return "", fmt.Errorf("%s's properties are not written as a block mapping", comp)
	}
	i, ok := child(e.lines, props, old)
	if !ok {
		return "", fmt.Errorf("%s.%s is not written as a block mapping key", comp, old)
	}
	if _, rest := keyOf(e.lines[i]); strings.TrimSpace(rest) != "" {
		return "", fmt.Errorf("%s.%s is written on one line: rename it by hand, with an x-go-name that keeps its Go field name", comp, old)
	}
	kids := children(e.lines, i)
	if len(kids) == 0 {
		return "", fmt.Errorf("%s.%s has no schema entries", comp, old)
	}
	e.set(i, renameKey(e.lines[i], name))
	for _, j := range kids {
		if k, v := keyOf(e.lines[j]); k == extGoName {
			return unquote(strings.TrimSpace(v)), nil
		}
	}
	goName := keepGoName(old)
	pad := strings.Repeat(" ", indentOf(e.lines[kids[0]]))
	for _, j := range kids {
		if k, v := keyOf(e.lines[j]); k == "$ref" {
			e.set(j, pad+"allOf:"+eol(e.lines[j]))
			e.insert(j+1, pad+"  - $ref: "+strings.TrimSpace(v)+eol(e.lines[j]))
			break
		}
	}
	e.insert(i+1, pad+extGoName+": "+goName+"\n")
	return goName, nil
}

// extGoName is oapi-codegen's extension that names a property's Go field.
const extGoName = "x-go-name"

// extSkipPointer is oapi-codegen's extension that keeps an optional
// property's Go field a value instead of a pointer.
const extSkipPointer = "x-go-type-skip-optional-pointer"

// keepValueType keeps the Go field of a property made optional a value:
// oapi-codegen makes an optional property a pointer, which would break
// every reader of the field at make generate. Whether StoreLink sent the
// field is read from the answer itself (ADR 0028), not from a nil
// pointer. A property that is a bare $ref gets its reference under allOf,
// as in renameProperty.
func keepValueType(e *edit, comp, prop string) error {
	props, ok := find(e.lines, "components", "schemas", comp, "properties")
	if !ok {
		return fmt.Errorf("%s's properties are not written as a block mapping", comp)
	}
	i, ok := child(e.lines, props, prop)
	if !ok {
		return fmt.Errorf("%s.%s is not written as a block mapping key", comp, prop)
	}
	if _, rest := keyOf(e.lines[i]); strings.TrimSpace(rest) != "" {
		return fmt.Errorf("%s.%s is written on one line: make it optional by hand, with %s: true", comp, prop, extSkipPointer)
	}
	kids := children(e.lines, i)
	if len(kids) == 0 {
		return fmt.Errorf("%s.%s has no schema entries", comp, prop)
	}
	for _, j := range kids {
		if k, _ := keyOf(e.lines[j]); k == extSkipPointer {
			return nil
		}
	}
	pad := strings.Repeat(" ", indentOf(e.lines[kids[0]]))
	for _, j := range kids {
		if k, v := keyOf(e.lines[j]); k == "$ref" {
			e.set(j, pad+"allOf:"+eol(e.lines[j]))
			e.insert(j+1, pad+"  - $ref: "+strings.TrimSpace(v)+eol(e.lines[j]))
			break
		}
	}
	e.insert(i+1, pad+extSkipPointer+": true\n")
	return nil
}

// removeNode deletes the key at line i with its block; with mark, the
// place it was at counts as changed.
func removeNode(e *edit, i int, mark bool) {
	for n := end(e.lines, i) - i; n > 0; n-- {
		e.remove(i)
	}
	if mark {
		e.changed[i] = true
	}
}

// renameRequired renames an entry of a component's required list.
func (s *suggester) renameRequired(e *edit, comp, old, name string) {
	s.editRequired(e, comp, old, func(string) (string, bool) { return name, true })
}

// editRequired changes the entry old of comp's required list with f,
// which returns the new entry or false to drop it. It reports whether the
// entry was found.
func (s *suggester) editRequired(e *edit, comp, old string, f func(string) (string, bool)) bool {
	schema, ok := find(e.lines, "components", "schemas", comp)
	if !ok {
		return false
	}
	i, ok := child(e.lines, schema, "required")
	if !ok {
		return false
	}
	line := e.lines[i]
	if open := strings.Index(line, "["); open >= 0 {
		close := strings.LastIndex(line, "]")
		if close < open {
			return false
		}
		var items []string
		found := false
		for _, it := range strings.Split(line[open+1:close], ",") {
			it = strings.TrimSpace(it)
			if it == "" {
				continue
			}
			if unquote(it) == old {
				found = true
				n, keep := f(old)
				if !keep {
					continue
				}
				it = quoteName(n)
			}
			items = append(items, it)
		}
		if !found {
			return false
		}
		if len(items) == 0 {
			removeNode(e, i, true)
			return true
		}
		e.set(i, line[:open+1]+strings.Join(items, ", ")+line[close:])
		return true
	}
	items := seqItems(e.lines, i)
	for _, j := range items {
		v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stripEOL(e.lines[j])), "-"))
		if unquote(v) != old {
			continue
		}
		n, keep := f(old)
		if !keep {
			if len(items) == 1 {
				removeNode(e, i, true)
			} else {
				e.remove(j)
				e.changed[i] = true
			}
			return true
		}
		dash := strings.Index(e.lines[j], "-")
		e.set(j, e.lines[j][:dash]+"- "+quoteName(n)+eol(e.lines[j]))
		return true
	}
	return false
}

// renameInExamples renames the key old to name wherever an example of the
// contract holds an object of schema target: the examples of the schema
// components and of the responses' media types.
func (s *suggester) renameInExamples(e *edit, target *openapi3.Schema, old, name string) {
	for _, comp := range slices.Sorted(maps.Keys(s.doc.Components.Schemas)) {
		ref := s.doc.Components.Schemas[comp]
		if ref == nil || ref.Value == nil {
			continue
		}
		if i, ok := find(e.lines, "components", "schemas", comp, "example"); ok {
			renameValue(e, i, ref.Value, target, old, name, 0)
		}
	}
	media := func(at []string, content openapi3.Content) {
		for _, mt := range slices.Sorted(maps.Keys(content)) {
			m := content[mt]
			if m == nil || m.Schema == nil || m.Schema.Value == nil {
				continue
			}
			if i, ok := find(e.lines, append(slices.Clone(at), "content", mt, "example")...); ok {
				renameValue(e, i, m.Schema.Value, target, old, name, 0)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.doc.Components.Responses)) {
		if r := s.doc.Components.Responses[name]; r != nil && r.Value != nil {
			media([]string{"components", "responses", name}, r.Value.Content)
		}
	}
	if s.doc.Paths == nil {
		return
	}
	for path, item := range s.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			for status, r := range op.Responses.Map() {
				if r.Ref == "" && r.Value != nil {
					media([]string{"paths", path, strings.ToLower(method), "responses", status}, r.Value.Content)
				}
			}
		}
	}
}

// renameValue renames keys in the value of the key at line i, an instance
// of schema: the key old of every object of schema target becomes name.
func renameValue(e *edit, i int, schema, target *openapi3.Schema, old, name string, depth int) {
	if schema == nil || depth > 16 {
		return
	}
	_, rest := keyOf(e.lines[i])
	if v := strings.TrimSpace(rest); v != "" {
		if strings.HasPrefix(v, "{") && schema == target {
			e.set(i, renameFlowKey(e.lines[i], old, name))
		}
		if strings.HasPrefix(v, "[") && schema.Items != nil && schema.Items.Value == target {
			e.set(i, renameFlowKey(e.lines[i], old, name))
		}
		return
	}
	renameMapping(e, keyLines(e.lines, i), schema, target, old, name, depth)
}

// renameMapping renames keys among the key lines of one block mapping, an
// instance of schema, and recurses into their values.
func renameMapping(e *edit, keys []int, schema, target *openapi3.Schema, old, name string, depth int) {
	if len(keys) > 0 && isSeqItem(e.lines[keys[0]]) && schema.Items != nil {
		for _, item := range seqItemsAt(e.lines, keys) {
			renameMapping(e, item, schema.Items.Value, target, old, name, depth+1)
		}
		return
	}
	for _, j := range keys {
		k, _ := keyOf(e.lines[j])
		if k == "" {
			continue
		}
		if p := schema.Properties[k]; p != nil {
			renameValue(e, j, p.Value, target, old, name, depth+1)
		}
		if schema == target && k == old {
			e.set(j, renameKey(e.lines[j], name))
		}
	}
}

// addProperty adds an optional property StoreLink sends to a component.
func (s *suggester) addProperty(c Cause) (change, evidence, why string) {
	ev := c.Evidence
	comp := componentOf(c)
	if ev == nil || ev.Found == "" || comp == "" {
		return "", "", "an unexpected property without its component and name: nothing to build a change from"
	}
	if !isPropertyName(ev.Found) || !isPropertyName(comp) {
		return "", "", "the name is not a plain property name: change the spec by hand"
	}
	schema := s.component(comp)
	if schema == nil {
		return "", "", fmt.Sprintf("the contract has no schema component %s", comp)
	}
	if schema.Properties[ev.Found] != nil {
		return "", "", fmt.Sprintf("%s already has a property %s", comp, ev.Found)
	}
	e := s.begin()
	props, ok := find(e.lines, "components", "schemas", comp, "properties")
	if !ok {
		return "", "", fmt.Sprintf("%s's properties are not written as a block mapping: change the spec by hand", comp)
	}
	kids := children(e.lines, props)
	ind := indentOf(e.lines[props]) + 2
	if len(kids) > 0 {
		ind = indentOf(e.lines[kids[0]])
	}
	pad := strings.Repeat(" ", ind)
	add := []string{pad + quoteName(ev.Found) + ":\n"}
	typ := "no type"
	if isJSONType(ev.JSONType) && ev.JSONType != "null" {
		typ = ev.JSONType
		add = append(add, pad+"  type: "+ev.JSONType+"\n")
		if ev.JSONType == "string" && ev.Format == "date-time" {
			typ += ", date-time"
			add = append(add, pad+"  format: date-time\n")
		}
		if ev.JSONType == "array" {
			add = append(add, pad+"  items: {}\n")
		}
	}
	add = append(add, pad+"  description: \""+addedDescription+"\"\n")
	evidence = fmt.Sprintf("%s: %s present, not declared (%s)", seen(c), ev.Found, typ)
	if typ == "no type" {
		kind := "values of different types"
		if ev.JSONType == "null" {
			kind = "only null"
		}
		evidence += fmt.Sprintf("; StoreLink sent %s: the type is left out, a reviewer must set it", kind)
	}
	e.insert(end(e.lines, props), add...)
	if err := s.commit(e, evidence); err != nil {
		return "", "", "the added property would not validate: " + firstLine(err.Error())
	}
	return fmt.Sprintf("add optional property %s.%s (%s)", comp, ev.Found, typ), evidence, ""
}

// makeOptional removes a missing property from its component's required
// list.
func (s *suggester) makeOptional(c Cause) (change, evidence, why string) {
	comp := componentOf(c)
	prop := ""
	if c.Evidence != nil {
		prop = c.Evidence.Property
	}
	if prop == "" {
		prop = lastToken(c.Path)
	}
	if comp == "" || prop == "" || !isPropertyName(prop) || !isPropertyName(comp) {
		return "", "", "a missing property without its component and name: nothing to build a change from"
	}
	if s.component(comp) == nil {
		return "", "", fmt.Sprintf("the contract has no schema component %s", comp)
	}
	e := s.begin()
	if !s.editRequired(e, comp, prop, func(string) (string, bool) { return "", false }) {
		return "", "", fmt.Sprintf("%s does not require %s (already changed?)", comp, prop)
	}
	if err := keepValueType(e, comp, prop); err != nil {
		return "", "", err.Error()
	}
	evidence = fmt.Sprintf("%s: %s missing; a reviewer must decide whether it is truly optional", seen(c), prop)
	if err := s.commit(e, evidence); err != nil {
		return "", "", "making it optional would not validate: " + firstLine(err.Error())
	}
	return fmt.Sprintf("make %s.%s optional", comp, prop), evidence, ""
}

// declareStatus declares a status StoreLink answers on the operations it
// was seen on.
func (s *suggester) declareStatus(c Cause) (change, evidence, why string) {
	if c.Evidence == nil || c.Evidence.Status < 100 || c.Evidence.Status > 599 {
		return "", "", "an undeclared status without a valid status code: nothing to build a change from"
	}
	status := c.Evidence.Status
	code := strconv.Itoa(status)
	ref := s.responseFor(code)
	e := s.begin()
	var done []string
	for _, opID := range c.Operations {
		op, ok := s.operation(e.lines, opID)
		if !ok {
			continue
		}
		resp, ok := child(e.lines, op, "responses")
		if !ok {
			continue
		}
		if _, ok := child(e.lines, resp, code); ok {
			continue
		}
		kids := children(e.lines, resp)
		ind := indentOf(e.lines[resp]) + 2
		at := end(e.lines, resp)
		if len(kids) > 0 {
			ind = indentOf(e.lines[kids[0]])
		}
		for _, k := range kids {
			key, _ := keyOf(e.lines[k])
			if n, err := strconv.Atoi(key); err == nil && n > status {
				at = k
				break
			}
		}
		pad := strings.Repeat(" ", ind)
		add := []string{pad + strconv.Quote(code) + ":\n"}
		switch {
		case ref != "":
			add = append(add, pad+"  $ref: \"#/components/responses/"+ref+"\"\n")
		case status >= 400 && s.component("Error") != nil:
			add = append(add, pad+"  description: \""+addedDescription+"\"\n",
				pad+"  content:\n", pad+"    application/json:\n", pad+"      schema:\n",
				pad+"        $ref: \"#/components/schemas/Error\"\n")
		default:
			add = append(add, pad+"  description: \""+addedDescription+"\"\n")
		}
		e.insert(at, add...)
		done = append(done, opID)
	}
	if len(done) == 0 {
		return "", "", fmt.Sprintf("no operation of the cause lacks %d in the contract (already declared?)", status)
	}
	evidence = fmt.Sprintf("%s: StoreLink answered %d, not declared", seen(c), status)
	if err := s.commit(e, evidence); err != nil {
		return "", "", "declaring the status would not validate: " + firstLine(err.Error())
	}
	with := "inline, with the Error schema"
	switch {
	case ref != "":
		with = ref
	case status < 400:
		with = "inline, no body"
	}
	return fmt.Sprintf("declare %d on %s (%s)", status, strings.Join(done, ", "), with), evidence, ""
}

// responseFor is the response component the contract's operations use for
// status code, if they agree on one.
func (s *suggester) responseFor(code string) string {
	seen := map[string]bool{}
	if s.doc.Paths != nil {
		for _, item := range s.doc.Paths.Map() {
			for _, op := range item.Operations() {
				if op.Responses == nil {
					continue
				}
				if r := op.Responses.Value(code); r != nil && strings.HasPrefix(r.Ref, "#/components/responses/") {
					seen[strings.TrimPrefix(r.Ref, "#/components/responses/")] = true
				}
			}
		}
	}
	if len(seen) == 1 {
		for name := range seen {
			return name
		}
	}
	return ""
}

// operation finds the line of the operation opID (its method key).
func (s *suggester) operation(lines []string, opID string) (int, bool) {
	paths, ok := find(lines, "paths")
	if !ok {
		return 0, false
	}
	for _, p := range children(lines, paths) {
		for _, m := range children(lines, p) {
			if id, ok := child(lines, m, "operationId"); ok {
				if _, v := keyOf(lines[id]); unquote(strings.TrimSpace(v)) == opID {
					return m, true
				}
			}
		}
	}
	return 0, false
}

// relaxPattern widens a pattern to take both its old strings and the
// shape StoreLink sent.
func (s *suggester) relaxPattern(c Cause) (change, evidence, why string) {
	ev := c.Evidence
	if ev == nil || ev.Shape == nil {
		return "", "", "a broken pattern without the shape of the values: nothing to build a change from"
	}
	class, ok := safeClass(ev.Shape.Classes)
	if !ok {
		return "", "", "the shape's character classes are not plain classes (a-z, A-Z, 0-9, punctuation): change the pattern by hand"
	}
	tokens := pointerTokens(strings.TrimSuffix(c.Schema, "/pattern"))
	if len(tokens) == 0 {
		if comp := componentOf(c); comp != "" {
			tokens = []string{"components", "schemas", comp}
		}
	}
	e := s.begin()
	at, ok := find(e.lines, tokens...)
	if !ok {
		return "", "", fmt.Sprintf("the contract has no schema at %s", safeName(c.Schema))
	}
	i, ok := child(e.lines, at, "pattern")
	if !ok {
		return "", "", "the schema has no pattern (already changed?)"
	}
	_, raw := keyOf(e.lines[i])
	old := unquote(strings.TrimSpace(raw))
	if ev.Pattern != "" && ev.Pattern != old {
		return "", "", "the contract's pattern is no longer the one the values broke (already changed?)"
	}
	re, err := syntax.Parse(old, syntax.Perl)
	if err != nil {
		return "", "", "the contract's pattern does not parse: " + err.Error()
	}
	lo, hi := max(ev.Shape.MinLen, 0), ev.Shape.MaxLen
	if m := maxLength(re); m > hi {
		hi = m
	}
	if hi < lo || hi < 1 {
		return "", "", "the shape's lengths are not usable"
	}
	rep := fmt.Sprintf("{%d,%d}", lo, hi)
	if hi > 1000 {
		rep = fmt.Sprintf("{%d,}", lo)
	}
	alt := "[" + class + "]" + rep
	var relaxed string
	if inner, ok := anchored(old); ok {
		relaxed = "^(?:" + inner + "|" + alt + ")$"
	} else {
		relaxed = "(?:" + old + ")|^" + alt + "$"
	}
	if _, err := regexp.Compile(relaxed); err != nil {
		return "", "", "the relaxed pattern does not compile: " + err.Error()
	}
	e.set(i, strings.Repeat(" ", indentOf(e.lines[i]))+"pattern: "+yamlQuote(relaxed)+eol(e.lines[i]))
	where := strings.Join(tokens[len(tokens)-1:], "")
	if len(tokens) >= 3 && tokens[0] == "components" {
		where = strings.Join(tokens[2:], ".")
		where = strings.ReplaceAll(where, ".properties.", ".")
	}
	evidence = fmt.Sprintf("%s: values of shape [%s]{%d,%d} break %s", seen(c), class, ev.Shape.MinLen, ev.Shape.MaxLen, old)
	if set, ok := parseClasses(class); ok && len(set.unusual()) > 0 {
		evidence += "; the values hold " + strings.Join(set.unusual(), ", ") + ": check that StoreLink means it"
	}
	if err := s.commit(e, evidence); err != nil {
		return "", "", "the relaxed pattern would not validate: " + firstLine(err.Error())
	}
	return fmt.Sprintf("relax %s's pattern to also accept [%s]%s", where, class, rep), evidence, ""
}

// anchored strips the ^ and $ around a pattern anchored at both ends.
func anchored(p string) (string, bool) {
	if !strings.HasPrefix(p, "^") || !strings.HasSuffix(p, "$") || strings.HasSuffix(p, `\$`) || len(p) < 2 {
		return "", false
	}
	return p[1 : len(p)-1], true
}

// maxLength is the most characters a regular expression matches, or -1
// when it has no bound.
func maxLength(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxLength(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		m := maxLength(re.Sub[0])
		if re.Max < 0 || m < 0 {
			return -1
		}
		return m * re.Max
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			m := maxLength(sub)
			if m < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
		}
		return n
	}
	return 0
}

// safeClass rebuilds a character class body from the ranges a-z, A-Z and
// 0-9, the classes of shapeOf (letters and digits outside ASCII, control
// characters) and single ASCII punctuation characters, escaping what a
// class needs; anything else (a letter or digit of its own, which could
// spell a value) is refused.
func safeClass(body string) (string, bool) {
	c, ok := parseClasses(body)
	if !ok {
		return "", false
	}
	return c.String(), true
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

// componentOf is the component a cause is about: its evidence's, or the
// one its schema location names.
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

var (
	propertyName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)
	plainName    = regexp.MustCompile(`^[A-Za-z0-9_./#~:{}-]{1,200}$`)
	yamlSpecial  = regexp.MustCompile(`^(?i:true|false|null|yes|no|on|off|y|n|~)$`)
)

// isPropertyName reports whether a name is a plain property name, the
// only kind Suggest writes into the contract.
func isPropertyName(s string) bool { return propertyName.MatchString(s) }

// safeName keeps s for a message when it is a plain name, else "?".
func safeName(s string) string {
	if s == "" || plainName.MatchString(s) {
		return s
	}
	return "?"
}

func isJSONType(t string) bool {
	switch t {
	case "string", "integer", "number", "boolean", "object", "array", "null":
		return true
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// --- the YAML text, line by line ---

// splitLines splits text into lines that keep their line endings.
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

func stripEOL(s string) string { return strings.TrimRight(s, "\r\n") }

func eol(s string) string { return s[len(stripEOL(s)):] }

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func isComment(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "#") }

// blank reports whether a line holds no node: empty or a comment.
func blank(s string) bool { return strings.TrimSpace(s) == "" || isComment(s) }

func isSeqItem(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "-" || strings.HasPrefix(stripEOL(t), "-") && (len(stripEOL(t)) == 1 || t[1] == ' ')
}

// keyOf splits a mapping line "key: rest" (also "- key: rest") into its
// unquoted key and the rest; key is "" when the line is no mapping entry.
func keyOf(line string) (key, rest string) {
	t := strings.TrimSpace(stripEOL(line))
	if strings.HasPrefix(t, "- ") {
		t = strings.TrimSpace(t[2:])
	}
	if t == "" || t[0] == '#' || t[0] == '{' || t[0] == '[' {
		return "", ""
	}
	if t[0] == '"' || t[0] == '\'' {
		q := t[0]
		j := strings.IndexByte(t[1:], q)
		if j < 0 || !strings.HasPrefix(t[j+2:], ":") {
			return "", ""
		}
		return t[1 : j+1], t[j+3:]
	}
	j := strings.Index(t, ": ")
	if strings.HasSuffix(t, ":") && (j < 0 || j == len(t)-1) {
		j = len(t) - 1
	}
	if j <= 0 {
		return "", ""
	}
	return t[:j], strings.TrimPrefix(t[j+1:], " ")
}

// end is the line after the block of the node at line i; -1 is the
// document.
func end(lines []string, i int) int {
	if i < 0 {
		return len(lines)
	}
	ind := indentOf(lines[i])
	_, rest := keyOf(lines[i])
	scalar := strings.HasPrefix(strings.TrimSpace(rest), "|") || strings.HasPrefix(strings.TrimSpace(rest), ">")
	last := i
	for j := i + 1; j < len(lines); j++ {
		if strings.TrimSpace(lines[j]) == "" || (!scalar && isComment(lines[j])) {
			continue
		}
		in := indentOf(lines[j])
		if in < ind || (in == ind && !(isSeqItem(lines[j]) && !isSeqItem(lines[i]) && strings.TrimSpace(rest) == "")) {
			break
		}
		last = j
	}
	return last + 1
}

// children are the lines of the direct entries of the node at line i (-1:
// the document).
func children(lines []string, i int) []int {
	stop := end(lines, i)
	if i >= 0 {
		if _, rest := keyOf(lines[i]); strings.TrimSpace(rest) != "" {
			return nil
		}
	}
	ind := -1
	var out []int
	for j := i + 1; j < stop; {
		if blank(lines[j]) {
			j++
			continue
		}
		if ind < 0 {
			ind = indentOf(lines[j])
		}
		if indentOf(lines[j]) != ind {
			j++
			continue
		}
		out = append(out, j)
		j = max(end(lines, j), j+1)
	}
	return out
}

// child finds the entry key among the children of line i.
func child(lines []string, i int, key string) (int, bool) {
	for _, j := range children(lines, i) {
		if k, _ := keyOf(lines[j]); k == key && !isSeqItem(lines[j]) {
			return j, true
		}
	}
	return 0, false
}

// find follows keys from the document's top.
func find(lines []string, keys ...string) (int, bool) {
	at := -1
	for _, k := range keys {
		j, ok := child(lines, at, k)
		if !ok {
			return 0, false
		}
		at = j
	}
	return at, at >= 0
}

// seqItems are the item lines of the block sequence under line i.
func seqItems(lines []string, i int) []int {
	var out []int
	for _, j := range children(lines, i) {
		if isSeqItem(lines[j]) {
			out = append(out, j)
		}
	}
	return out
}

// keyLines are the key lines of the block under line i: its children and,
// for sequence items, the lines of each item.
func keyLines(lines []string, i int) []int {
	return children(lines, i)
}

// seqItemsAt groups the key lines of each sequence item: the item's line
// ("- key: v") and the keys indented under it.
func seqItemsAt(lines []string, items []int) [][]int {
	var out [][]int
	for _, j := range items {
		if !isSeqItem(lines[j]) {
			continue
		}
		group := []int{j}
		dash := strings.Index(lines[j], "-")
		col := dash + 1 + (len(lines[j][dash+1:]) - len(strings.TrimLeft(lines[j][dash+1:], " ")))
		for k := j + 1; k < end(lines, j); {
			if blank(lines[k]) {
				k++
				continue
			}
			if indentOf(lines[k]) == col {
				group = append(group, k)
				k = max(end(lines, k), k+1)
				continue
			}
			k++
		}
		out = append(out, group)
	}
	return out
}

// renameKey gives the mapping line a new key, keeping its indentation, a
// sequence dash and its value.
func renameKey(line, name string) string {
	_, rest := keyOf(line)
	t := strings.TrimLeft(line, " ")
	prefix := line[:len(line)-len(t)]
	if strings.HasPrefix(t, "- ") {
		prefix += "- "
	}
	out := prefix + quoteName(name) + ":"
	if rest != "" {
		out += " " + rest
	}
	return out + eol(line)
}

// renameFlowKey renames the key old of the outermost flow mappings on a
// line ("{ a: 1, b: 2 }", or "[{ a: 1 }]").
func renameFlowKey(line, old, name string) string {
	var b strings.Builder
	depth, maps := 0, 0
	var quote byte
	expectKey := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if quote != 0 {
			b.WriteByte(c)
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(line) {
				i++
				b.WriteByte(line[i])
			}
			continue
		}
		if expectKey && c != ' ' {
			expectKey = false
			if maps == 1 {
				k, n := flowKey(line[i:])
				if n > 0 && k == old {
					b.WriteString(quoteName(name))
					i += n - 1
					continue
				}
			}
		}
		switch c {
		case '"', '\'':
			quote = c
		case '{':
			depth++
			maps++
			expectKey = true
		case '[':
			depth++
		case '}':
			depth--
			maps--
		case ']':
			depth--
		case ',':
			expectKey = maps > 0
		}
		b.WriteByte(c)
	}
	return b.String()
}

// flowKey reads a key at the start of s in a flow mapping: its text and
// how many bytes it takes (up to, not including, the colon).
func flowKey(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	if s[0] == '"' || s[0] == '\'' {
		j := strings.IndexByte(s[1:], s[0])
		if j < 0 || !strings.HasPrefix(strings.TrimLeft(s[j+2:], " "), ":") {
			return "", 0
		}
		return s[1 : j+1], j + 2
	}
	j := strings.IndexByte(s, ':')
	if j <= 0 || strings.ContainsAny(s[:j], ",{}[]") {
		return "", 0
	}
	return strings.TrimSpace(s[:j]), len(strings.TrimRight(s[:j], " "))
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"') {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// quoteName writes a property name as a YAML key, quoted when a plain key
// would read as something else.
func quoteName(s string) string {
	if yamlSpecial.MatchString(s) || (s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[0] == '-')) {
		return strconv.Quote(s)
	}
	return s
}

// yamlQuote writes s as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// --- unified diff ---

// unifiedDiff is the unified diff from a to b (lines with their endings)
// with 3 lines of context, naming both sides by path under a/ and b/.
func unifiedDiff(a, b []string, path string) string {
	ops := diffLines(a, b)
	if !slices.ContainsFunc(ops, func(o diffOp) bool { return o.kind != ' ' }) {
		return ""
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		stop := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				stop = j + 1
				continue
			}
			if j-stop >= 2*context {
				break
			}
		}
		stop = min(stop+context, len(ops))
		aStart, bStart := ops[start].a, ops[start].b
		aLen, bLen := 0, 0
		for _, o := range ops[start:stop] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:stop] {
			line := o.line
			out.WriteByte(o.kind)
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffOp is one line of a diff: kind ' ', '-' or '+', and the line's index
// in a and b before it (0-based).
type diffOp struct {
	kind byte
	a, b int
	line string
}

// diffLines is a shortest edit script from a to b by the longest common
// subsequence, after their common head and tail.
func diffLines(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	n, m := len(ma), len(mb)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	for k := 0; k < head; k++ {
		ops = append(ops, diffOp{' ', k, k, a[k]})
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			ops = append(ops, diffOp{' ', head + i, head + j, ma[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', head + i, head + j, ma[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', head + i, head + j, mb[j]})
			j++
		}
	}
	for k := 0; k < tail; k++ {
		ops = append(ops, diffOp{' ', len(a) - tail + k, len(b) - tail + k, a[len(a)-tail+k]})
	}
	return ops
}
