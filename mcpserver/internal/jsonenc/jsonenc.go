// Package jsonenc appends JSON strings and numbers to a byte slice with
// exactly the bytes encoding/json writes for them. The hand-written
// encoders of the hot path (the risk answer in tools, the audit spool line
// in state/sqlite) use it instead of reflection; each has a test that
// compares its whole output with encoding/json's.
package jsonenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plain and html are the ASCII bytes a string holds as they are: with
// encoding/json's HTML escaping off (an Encoder after SetEscapeHTML(false))
// and on (json.Marshal), which also escapes <, > and &.
var plain, html = func() (p, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return p, h
}()

// AppendString appends s quoted as encoding/json quotes a string: '"' and
// '\\' escaped, control bytes as \b, \f, \n, \r, \t or \u00XX, each invalid
// UTF-8 byte as \ufffd, U+2028 and U+2029 as \u2028 and \u2029, and with
// escapeHTML also <, > and & as \u003c, \u003e and \u0026 (json.Marshal
// does; an Encoder after SetEscapeHTML(false) does not).
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	safe := &plain
	if escapeHTML {
		safe = &html
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// decimal, in exponent notation below 1e-6 and from 1e21 on, with a
// two-digit negative exponent cut to one digit (1e-07 is 1e-7). f must be
// finite: encoding/json refuses NaN and the infinities, and so must the
// caller.
func AppendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
