// Package textsafe makes text that arrived from agents, clients or
// StoreLink safe to show to a person on a terminal: one escaping function
// every human-facing printer uses, so a value can never start a new line,
// move the cursor, recolour the screen or reverse the reading order, and
// therefore never forge a row of the audit trail or of the approvals list.
//
// Only the display is changed. Stored values stay as they were written
// (except where a caller chooses to store the escaped form), and JSON
// output, whose encoder escapes control characters itself, stays exact.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that is not printable written as
// a visible escape: \n, \r and \t by name, other control characters,
// ANSI escape sequences' ESC, C1 controls, bidirectional overrides,
// zero-width and other format characters, line and paragraph separators as
// \xNN, \uNNNN or \UNNNNNNNN, and bytes that are not UTF-8 as \xNN.
// Printable text, accented letters and backslashes included, is kept as it
// is, which makes Escape idempotent: a value stored escaped (a client's
// name) prints the same when a printer escapes it again. The result is
// always one line.
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

// printable is unicode.IsPrint (letters, marks, numbers, punctuation,
// symbols and the ASCII space), which excludes every control, format
// (bidi overrides, zero-width characters) and separator character.
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
// "…" marking a cut. It is for values a caller keeps, such as the name a
// client gives itself, which nobody verified and which must not grow a
// stored record without limit.
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
