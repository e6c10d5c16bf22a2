package contract

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
)

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

// safeClass rebuilds a character class body from shapeOf's classes and
// ASCII punctuation, escaped; anything that could spell a value is refused.
func safeClass(body string) (string, bool) {
	c, ok := parseClasses(body)
	if !ok {
		return "", false
	}
	return c.String(), true
}
