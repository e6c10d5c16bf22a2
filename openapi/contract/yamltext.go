package contract

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

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
