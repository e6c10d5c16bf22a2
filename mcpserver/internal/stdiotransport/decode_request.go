package stdiotransport

import (
	"bytes"
	"encoding/json"

	"github.com/korral/storelink/mcpserver/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeRequest reads the usual request line in one scan: one object whose
// only keys are "jsonrpc" (exactly "2.0"), "method" (a string), "id" (an
// integer of at most 18 digits or a string, or absent) and "params" (an
// object or an array, or absent), each at most once, in any order, with no
// escapes and no bytes outside ASCII in the strings it reads. It gives
// what decodeGeneral gives for that line. Any other line, valid or not, is
// ok=false, and decodeGeneral reads it: every refusal comes from there.
func decodeRequest(line []byte) (req *jsonrpc.Request, ok bool) {
	// A valid line has its brackets and strings closed, so the scan below
	// cannot run past the end while it finds a value's bounds.
	if !json.Valid(line) {
		return nil, false
	}
	i := jsonscan.SkipSpace(line, 0)
	if line[i] != '{' {
		return nil, false
	}
	const (
		haveVersion = 1 << iota
		haveID
		haveMethod
		haveParams
	)
	var seen uint8
	var id any
	var method, params []byte
	i = jsonscan.SkipSpace(line, i+1)
	for line[i] != '}' {
		key, next, ok := plainString(line, i)
		if !ok {
			return nil, false
		}
		i = jsonscan.SkipSpace(line, jsonscan.SkipSpace(line, next)+1) // past the ':'
		var field uint8
		switch string(key) {
		case "jsonrpc":
			field = haveVersion
			if !bytes.HasPrefix(line[i:], []byte(`"2.0"`)) {
				return nil, false
			}
			i += len(`"2.0"`)
		case "id":
			field = haveID
			if id, i, ok = requestID(line, i); !ok {
				return nil, false
			}
		case "method":
			field = haveMethod
			if method, i, ok = plainString(line, i); !ok {
				return nil, false
			}
		case "params":
			field = haveParams
			if line[i] != '{' && line[i] != '[' {
				return nil, false
			}
			start := i
			i = jsonscan.SkipValue(line, i)
			params = line[start:i]
		default:
			return nil, false
		}
		if seen&field != 0 {
			return nil, false
		}
		seen |= field
		if i = jsonscan.SkipSpace(line, i); line[i] == ',' {
			i = jsonscan.SkipSpace(line, i+1)
		}
	}
	if seen&haveVersion == 0 || seen&haveMethod == 0 {
		return nil, false
	}
	// The line's buffer is read into again: params gets its own copy, as
	// json.RawMessage makes one.
	return &jsonrpc.Request{ID: idOf(id), Method: string(method), Params: bytes.Clone(params)}, true
}

// plainString is the string at b[i] when it has no escape and only ASCII
// (the bytes encoding/json would give unchanged), and the index after it.
func plainString(b []byte, i int) (s []byte, next int, ok bool) {
	if b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c >= 0x80:
			return nil, i, false
		}
	}
	return nil, i, false
}

// requestID is an id parseID would read as the same value: a plain string,
// or an integer of 1 to 18 digits. A fraction or an exponent stops the
// digits at a byte that is neither ',' nor '}', which decodeRequest
// refuses as the next key.
func requestID(b []byte, i int) (id any, next int, ok bool) {
	if b[i] == '"' {
		s, next, ok := plainString(b, i)
		return string(s), next, ok
	}
	j := i
	if b[j] == '-' {
		j++
	}
	var n int64
	start := j
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		n = n*10 + int64(b[j]-'0')
	}
	if digits := j - start; digits == 0 || digits > 18 {
		return nil, i, false
	}
	if b[i] == '-' {
		n = -n
	}
	return n, j, true
}
