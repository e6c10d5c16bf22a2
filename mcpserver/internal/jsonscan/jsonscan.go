// Package jsonscan finds the bounds of values in a JSON document that
// json.Valid has accepted, without decoding them. The one-scan readers of
// the hot path (the stdio request line in stdiotransport, the tools/call
// params in audit) use it; each checks the document with json.Valid first
// and holds its scan to a full decode with a differential test and a fuzz
// target.
package jsonscan

// SkipSpace is the index of the first byte at or after i that is not JSON
// white space, or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipValue is the index just after the value that starts at b[i], in a
// valid document: after its closing quote or bracket, or, for a number or
// a literal, at the ',', '}' or ']' that follows it.
func SkipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
