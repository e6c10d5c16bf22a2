package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// encodingJSON is what encoding/json writes for v, with or without its
// HTML escaping.
func encodingJSON(t testing.TB, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var strs = []string{
	"", "plain", `quote " and \ backslash`, "<b>Mléko & máslo</b>", "\x00\x01\x1f\x7f\t\n\r\b\f",
	"line\u2028sep\u2029para", "emoji 🧈", "bad \xff utf-8 \xc3", "\xe2\x80", "trailing <", "é",
}

func TestAppendStringIsEncodingJSONs(t *testing.T) {
	for _, s := range strs {
		for _, esc := range []bool{false, true} {
			want := encodingJSON(t, s, esc)
			if got := AppendString([]byte("x"), s, esc); !bytes.Equal(got[1:], want) || got[0] != 'x' {
				t.Errorf("AppendString(%q, html %v) = %s, want x%s", s, esc, got, want)
			}
		}
	}
}

func TestAppendFloatIsEncodingJSONs(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, -1e21, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 5e-324, 1.5e-10, 2.5e300} {
		want := encodingJSON(t, f, false)
		if got := AppendFloat(nil, f); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range strs {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, esc bool) {
		if got, want := AppendString(nil, s, esc), encodingJSON(t, s, esc); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q, html %v) = %s, want %s", s, esc, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0, 1e-7, 1e21, 0.3} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		if got, want := AppendFloat(nil, v), encodingJSON(t, v, false); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, want %s", v, got, want)
		}
	})
}
