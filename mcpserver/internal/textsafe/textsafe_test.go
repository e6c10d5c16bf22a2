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

// TestEscapeLeavesNothingUnprintable checks the property over every rune
// of planes 0 to 2 and the first and last block of every other plane (tags,
// private use), escaped in blocks: no control, format or separator
// character survives, and escaping twice changes nothing.
func TestEscapeLeavesNothingUnprintable(t *testing.T) {
	const block = 1 << 12
	for lo := rune(0); lo <= 0x10FFFF; lo += block {
		if off := lo & 0xFFFF; lo > 0x2FFFF && off != 0 && off != 0x10000-block {
			continue
		}
		var in strings.Builder
		for r := lo; r < lo+block && r <= 0x10FFFF; r++ {
			if r < 0xD800 || r > 0xDFFF {
				in.WriteRune(r)
			}
		}
		out := Escape(in.String())
		for _, c := range out {
			if !printable(c) {
				t.Fatalf("block %U: Escape keeps an unprintable %U", lo, c)
			}
		}
		if again := Escape(out); again != out {
			t.Fatalf("block %U: Escape is not idempotent", lo)
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
