package sqlite

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// errUnencodable is a record JSON cannot hold: a NaN or infinite duration,
// or a time outside the years 0 to 9999.
var errUnencodable = errors.New("state: audit record has a value JSON cannot hold")

// appendAuditLine appends r's spool line to b: the bytes a json.Encoder
// with SetEscapeHTML(false) writes for r, newline included, without
// reflection or allocation. TestAuditLineMatchesEncodingJSON holds the two
// equal. On errUnencodable, b is returned unchanged.
func appendAuditLine(b []byte, r *state.AuditRecord) ([]byte, error) {
	d := r.DurationMS
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return b, errUnencodable
	}
	start := len(b)
	b = append(b, `{"time":"`...)
	// AppendText is MarshalJSON without the quotes: RFC 3339 with
	// nanoseconds, refusing a year outside 0 to 9999.
	b, err := r.Time.AppendText(b)
	if err != nil {
		return b[:start], errUnencodable
	}
	b = append(b, `","call_id":`...)
	b = appendJSONString(b, r.CallID)
	b = append(b, `,"client":`...)
	b = appendJSONString(b, r.Client)
	b = append(b, `,"session":`...)
	b = appendJSONString(b, r.Session)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, r.Tool)
	if r.StoreID != "" {
		b = append(b, `,"store_id":`...)
		b = appendJSONString(b, r.StoreID)
	}
	if r.SKU != "" {
		b = append(b, `,"sku":`...)
		b = appendJSONString(b, r.SKU)
	}
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, r.Outcome)
	if r.ErrorCode != "" {
		b = append(b, `,"error_code":`...)
		b = appendJSONString(b, r.ErrorCode)
	}
	b = append(b, `,"summary":`...)
	b = appendJSONString(b, r.Summary)
	b = append(b, `,"duration_ms":`...)
	b = appendJSONFloat(b, d)
	if r.TraceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, r.TraceID)
	}
	return append(b, '}', '\n'), nil
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest form, in exponent notation below 1e-6 and from 1e21 on, with a
// two-digit negative exponent cut to one digit (1e-07 is 1e-7).
func appendJSONFloat(b []byte, f float64) []byte {
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json does with HTML
// escaping off: '"' and '\\' escaped, control bytes as \b, \f, \n, \r, \t
// or \u00XX, each invalid UTF-8 byte as \ufffd, and U+2028 and U+2029 as
// \u2028 and \u2029.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
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
