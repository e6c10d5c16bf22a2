package storelinkclient

import (
	"bytes"
	"encoding/json"
)

// The scanner's tokens: literals, numbers, strings and keys, read as
// encoding/json reads them, and the item counts that size a decoded slice.

// literal reads true, false or null.
func (s *scanner) literal(word string) {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		s.fail()
		return
	}
	s.pos += len(word)
}

// number reads a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && s.data[s.pos] >= '1' && s.data[s.pos] <= '9':
		s.digits()
	default:
		s.fail()
		return
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			s.fail()
			return
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			s.fail()
		}
	}
}

// digits skips decimal digits and returns how many.
func (s *scanner) digits() int {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}

// str reads a string and returns its bytes between the quotes; plain
// says they are its value as they stand (no escape, only ASCII).
func (s *scanner) str() (raw []byte, plain bool) {
	s.pos++
	start := s.pos
	plain = true
	for s.pos < len(s.data) {
		if s.pos = plainEnd(s.data, s.pos); s.pos == len(s.data) {
			break
		}
		switch c := s.data[s.pos]; {
		case c == '"':
			s.pos++
			return s.data[start : s.pos-1], plain
		case c == '\\':
			plain = false
			if !s.escape() {
				s.fail()
				return nil, false
			}
		case c < 0x20:
			s.fail()
			return nil, false
		case c >= 0x80:
			plain = false
			s.pos++
		default:
			s.pos++
		}
	}
	s.fail()
	return nil, false
}

// special marks the bytes of a string that are not ASCII characters
// standing for themselves: the quote, the backslash, control characters
// and the bytes of non-ASCII characters.
var special = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// escape skips one escape sequence of a string; false when it is none.
func (s *scanner) escape() bool {
	if s.pos+1 >= len(s.data) {
		return false
	}
	switch s.data[s.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos += 2
		return true
	case 'u':
		if s.pos+6 > len(s.data) {
			return false
		}
		for _, h := range s.data[s.pos+2 : s.pos+6] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		s.pos += 6
		return true
	}
	return false
}

// decodeKey is a quoted key with escapes or non-ASCII bytes as
// encoding/json reads it (invalid UTF-8 as U+FFFD).
func decodeKey(quoted []byte) (string, bool) {
	var name string
	err := json.Unmarshal(quoted, &name)
	return name, err == nil
}

// maxCounted bounds the items countItems reports, so an array of small
// values of another type (which the walk leaves to encoding/json) does not
// size a slice of large items; a longer array grows as it is read. A full
// POS page is 1,000 lines.
const maxCounted = 4096

// countItems counts the items of the array whose first item starts data
// (after '['), looking only at strings, brackets and commas: a capacity
// hint, not a check. It stops at the array's end or the body's; an array
// that is not well formed gives some count, which the walk then refuses.
func countItems(data []byte) int {
	n, _ := scanItems(data, false)
	return n
}

// estimateItems is a capacity hint for the array whose first item starts
// data: the bytes left over the first item's length (with its comma),
// bounded by maxCounted. Items about as long as the first or longer fit,
// with the room the allocation's rounding to its size class gives; when
// they do not, the walk counts the rest once the slice is full
// (countItems).
func estimateItems(data []byte) int {
	n, end := scanItems(data, true)
	if n == 1 {
		return 1
	}
	est := 1 + (len(data)-end)/(end+1)
	return min(est, maxCounted)
}

// scanItems counts the items as countItems does and returns where the
// scan ended; with first it stops at the comma after the first item
// (end is then its index and n is 2).
func scanItems(data []byte, first bool) (n, end int) {
	depth, n := 0, 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Skip the string: its end is the next quote after an even
			// number of backslashes.
			for {
				j := bytes.IndexByte(data[i+1:], '"')
				if j < 0 {
					return min(n, maxCounted), len(data)
				}
				i += 1 + j
				escapes := 0
				for k := i - 1; data[k] == '\\'; k-- {
					escapes++
				}
				if escapes%2 == 0 {
					break
				}
			}
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return min(n, maxCounted), i
			}
			depth--
		case ',':
			if depth == 0 {
				n++
				if first {
					return n, i
				}
			}
		}
	}
	return min(n, maxCounted), len(data)
}
