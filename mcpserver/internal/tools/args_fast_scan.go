package tools

import (
	"strings"
	"unicode/utf8"
)

// argScanner reads the small subset of JSON the argument plan handles.
// Each method returns false on anything outside that subset; the caller
// then leaves the arguments to decodeArgs. Strings are substrings of s,
// so the arguments' text is copied once.
type argScanner struct {
	s string
	i int
}

// ws skips JSON white space (space, tab, line feed, carriage return).
func (sc *argScanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (sc *argScanner) end() bool {
	sc.ws()
	return sc.i == len(sc.s)
}

// take consumes c if it is next.
func (sc *argScanner) take(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// str reads a string without escapes, control characters or invalid UTF-8.
func (sc *argScanner) str() (string, bool) {
	if !sc.take('"') {
		return "", false
	}
	start, ascii := sc.i, true
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			v := sc.s[start:sc.i]
			sc.i++
			return v, ascii || utf8.ValidString(v)
		case c < 0x20 || c == '\\':
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		sc.i++
	}
	return "", false
}

// integer reads -?(0|[1-9][0-9]*) of at most 15 digits, so the value is
// exact as a float64 (the validator's view) and as an int64; not -0, a
// fraction or an exponent.
func (sc *argScanner) integer() (int64, bool) {
	neg := sc.take('-')
	start := sc.i
	var n int64
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		n = n*10 + int64(sc.s[sc.i]-'0')
		sc.i++
	}
	digits := sc.i - start
	if digits == 0 || digits > 15 || digits > 1 && sc.s[start] == '0' || neg && n == 0 {
		return 0, false
	}
	if sc.i < len(sc.s) {
		if c := sc.s[sc.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// value reads the value of rule r's property into v.
func (sc *argScanner) value(r *argRule, v *argValue) bool {
	var ok bool
	switch r.kind {
	case argString:
		v.s, ok = sc.str()
	case argInt:
		v.n, ok = sc.integer()
	case argBool:
		switch {
		case strings.HasPrefix(sc.s[sc.i:], "true"):
			v.b, ok = true, true
			sc.i += len("true")
		case strings.HasPrefix(sc.s[sc.i:], "false"):
			v.b, ok = false, true
			sc.i += len("false")
		}
	case argStrings:
		v.ss, ok = sc.strings()
	}
	v.set = ok
	return ok
}

// strings reads an array of at most maxArgItems strings.
func (sc *argScanner) strings() ([]string, bool) {
	if !sc.take('[') {
		return nil, false
	}
	var buf [maxArgItems]string
	n := 0
	sc.ws()
	if !sc.take(']') {
		for {
			s, ok := sc.str()
			if !ok || n == len(buf) {
				return nil, false
			}
			buf[n] = s
			n++
			sc.ws()
			if sc.take(']') {
				break
			}
			if !sc.take(',') {
				return nil, false
			}
			sc.ws()
		}
	}
	// A fresh slice, not nil for [], as encoding/json decodes it.
	return append(make([]string, 0, n), buf[:n]...), true
}
