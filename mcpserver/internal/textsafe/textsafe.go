// Package textsafe escapes untrusted text for display on a terminal, so a
// value cannot start a new line, move the cursor or reverse the reading
// order, and so cannot forge a row of the audit trail. Only display changes:
// stored values and JSON output stay exact.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s on one line with every non-printable character written
// as a visible escape (\n, \r, \t, \xNN, \uNNNN, \UNNNNNNNN), and invalid
// UTF-8 bytes as \xNN. Printable text, backslashes included, is kept, so
// Escape is idempotent.
func Escape(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			hexEscape(&b, `\x`, rune(s[i]), 2)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < utf8.RuneSelf && !printable(r):
			hexEscape(&b, `\x`, r, 2)
		case !printable(r) && r <= 0xFFFF:
			hexEscape(&b, `\u`, r, 4)
		case !printable(r):
			hexEscape(&b, `\U`, r, 8)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hexEscape writes prefix and r as digits lowercase hex digits.
func hexEscape(b *strings.Builder, prefix string, r rune, digits int) {
	const hex = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}

// printable is unicode.IsPrint, which excludes every control, format and
// separator character.
func printable(r rune) bool { return unicode.IsPrint(r) }

// isSafe is the fast path: most values are plain ASCII with nothing to do.
func isSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Bound returns Escape(s) cut to at most max runes of the original, with
// "…" marking a cut, for unverified values a caller stores.
func Bound(s string, max int) string {
	if utf8.RuneCountInString(s) > max {
		n := 0
		for i := range s {
			if n == max {
				s = s[:i]
				break
			}
			n++
		}
		return Escape(s) + "…"
	}
	return Escape(s)
}
