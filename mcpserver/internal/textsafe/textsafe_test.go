package textsafe

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text 47", "plain text 47"},
		{"Praha Smíchov, Brno Královo Pole", "Praha Smíchov, Brno Královo Pole"},
		{"a\nb", `a\nb`},
		{"a\r\nb", `a\r\nb`},
		{"col\tcol", `col\tcol`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"nul\x00bell\x07del\x7f", `nul\x00bell\x07del\x7f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"line\u2028sep", `line\u2028sep`},
		{"tag\U000E0041", `tag\U000e0041`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{`back\slash`, `back\slash`},
		{`\n typed`, `\n typed`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEscapeLeavesNothingUnprintable checks the property over every rune of
// the Basic Multilingual Plane and beyond: no control, format or separator
// character survives.
func TestEscapeLeavesNothingUnprintable(t *testing.T) {
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		out := Escape(string(r))
		for _, c := range out {
			if !printable(c) {
				t.Fatalf("Escape(%U) = %q keeps an unprintable %U", r, out, c)
			}
		}
		if strings.ContainsAny(out, "\n\r\t\x1b") {
			t.Fatalf("Escape(%U) = %q", r, out)
		}
		if again := Escape(out); again != out {
			t.Fatalf("Escape is not idempotent on %U: %q then %q", r, out, again)
		}
	}
}

func TestBound(t *testing.T) {
	if got := Bound("short", 10); got != "short" {
		t.Errorf("got %q", got)
	}
	if got := Bound("Smíchov-agent", 7); got != "Smíchov…" {
		t.Errorf("got %q", got)
	}
	if got := Bound("ab\ncd", 3); got != `ab\n…` {
		t.Errorf("got %q", got)
	}
	long := strings.Repeat("x", 10000)
	if got := Bound(long, 64); len(got) != 64+len("…") {
		t.Errorf("bounded to %d bytes", len(got))
	}
}
