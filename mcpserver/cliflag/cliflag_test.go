package cliflag

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlagsInAnyPosition(t *testing.T) {
	cases := []struct {
		args []string
		pos  []string
		as   string
		v    bool
	}{
		{[]string{"approve", "A1", "--as", "eva"}, []string{"approve", "A1"}, "eva", false},
		{[]string{"--as", "eva", "approve", "-v", "A1"}, []string{"approve", "A1"}, "eva", true},
		{[]string{"-v", "--", "--as", "x"}, []string{"--as", "x"}, "", true},
		{nil, nil, "", false},
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		as := fs.String("as", "", "who")
		v := fs.Bool("v", false, "verbose")
		pos, err := Parse(fs, tc.args, "t", &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if diff := cmp.Diff(tc.pos, pos); diff != "" || *as != tc.as || *v != tc.v {
			t.Errorf("%v: positional %v as %q v %v", tc.args, pos, *as, *v)
		}
	}
}

func TestParseHelpAndErrors(t *testing.T) {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.String("day", "", "only this `day`")
	var out bytes.Buffer
	if _, err := Parse(fs, []string{"x", "--help"}, "Usage: audit [flags]", &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want ErrHelp", err)
	}
	if !strings.HasPrefix(out.String(), "Usage: audit [flags]\n") || !strings.Contains(out.String(), "-day day") {
		t.Errorf("help:\n%s", out.String())
	}
	_, err := Parse(fs, []string{"--nope"}, "", &out)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "audit: flag provided but not defined: -nope") {
		t.Errorf("error %q, want one line naming the flag", err)
	}
}
