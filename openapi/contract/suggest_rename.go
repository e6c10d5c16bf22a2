package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/korral/storelink/openapi"
)

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

// review leaves a doubtful rename to a person as comment lines above the
// declared property, and returns the note's text.
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

// renameProperty renames a property's key, keeping its Go field name with
// x-go-name. A bare $ref moves under allOf (3.0 ignores $ref siblings).
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

// keepValueType keeps a property made optional a value, not a pointer, in
// generated Go (ADR 0028). A bare $ref moves under allOf.
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

// editRequired replaces or drops (f returns false) the entry old of comp's
// required list, and reports whether it was found.
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

// renameInExamples renames the key old to name in every example object of
// schema target.
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
