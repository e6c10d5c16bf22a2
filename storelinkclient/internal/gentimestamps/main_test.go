package main

import (
	"strings"
	"testing"
)

func TestStoreLocal(t *testing.T) {
	for _, c := range []struct {
		spec string
		want bool
		err  string
	}{
		{"openapi: 3.0.3\ninfo:\n  title: x\n  version: 1\n", false, ""},
		{"openapi: 3.0.3\ninfo:\n  title: x\n  # a note\n  x-korral-timestamps: store-local\n  version: 1\n", true, ""},
		{"info:\n  x-korral-timestamps: \"store-local\" # declared\n", true, ""},
		// Deeper than info's keys, or outside info: not the declaration.
		{"info:\n  description: |\n    x-korral-timestamps: store-local\n  title: x\n", false, ""},
		{"info:\n  title: x\npaths:\n  x-korral-timestamps: store-local\n", false, ""},
		{"info:\n  x-korral-timestamps: utc\n", false, "the one value it takes is store-local"},
	} {
		got, err := storeLocal([]byte(c.spec))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
	src, err := render(true)
	if err != nil || !strings.Contains(string(src), "const StoreLocalTimestamps = true") || !strings.HasPrefix(string(src), "// Code generated") {
		t.Errorf("render: %v\n%s", err, src)
	}
}
