package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// valueCases are documents of one member, {"k":VALUE,"z":0}, and the value
// SkipValue must find in each.
var valueCases = []string{
	`"plain"`, `"esc\"aped\\"`, `"}],{["`, `""`,
	`0`, `-12.5e+3`, `true`, `false`, `null`,
	`{}`, `[]`, `{"a":[1,{"b":"]}"}],"c":null}`, `[[[]],"[",{"}":1}]`,
	"\"\u00e9\\u00e9\"",
}

// TestSkipValue: in each document SkipValue ends the value where
// encoding/json does.
func TestSkipValue(t *testing.T) {
	for _, v := range valueCases {
		for _, doc := range []string{`{"k":` + v + `,"z":0}`, `{"k":` + v + `}`, `[` + v + `]`} {
			if !json.Valid([]byte(doc)) {
				t.Fatalf("%s: not valid", doc)
			}
			start := bytes.Index([]byte(doc), []byte(v))
			end := SkipValue([]byte(doc), start)
			if got := doc[start:end]; got != v {
				t.Errorf("%s: value %q, want %q", doc, got, v)
			}
		}
	}
}

// FuzzSkipValue compares SkipValue with encoding/json's reading of the
// first element of any valid array.
func FuzzSkipValue(f *testing.F) {
	for _, v := range valueCases {
		f.Add([]byte(`[` + v + `,1]`))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var elems []json.RawMessage
		if !json.Valid(doc) || json.Unmarshal(doc, &elems) != nil || len(elems) == 0 {
			return
		}
		start := SkipSpace(doc, SkipSpace(doc, 0)+1)
		end := SkipValue(doc, start)
		if got := doc[start:end]; !bytes.Equal(bytes.TrimSpace(got), elems[0]) {
			t.Errorf("%s: first element %q, want %q", doc, got, elems[0])
		}
	})
}

func TestSkipSpace(t *testing.T) {
	if got := SkipSpace([]byte(" \t\r\n x"), 0); got != 5 {
		t.Errorf("SkipSpace: %d, want 5", got)
	}
	if got := SkipSpace([]byte("  "), 0); got != 2 {
		t.Errorf("SkipSpace at the end: %d, want 2", got)
	}
}
