package main

import (
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
)

func TestPatternMax(t *testing.T) {
	for _, c := range []struct {
		pattern string
		n       int
		ok      bool
	}{
		{`^[0-9]{1,6}$`, 6, true},
		{`^[A-Za-z0-9][A-Za-z0-9-]{0,31}$`, 32, true},
		{`^([01][0-9]|2[0-3]):[0-5][0-9]$`, 5, true},
		{`^(ab|c)?d$`, 3, true},
		// Unbounded, or not anchored at both ends: no bound.
		{`^[A-Za-z][A-Za-z0-9_+-]*$`, 0, false},
		{`[0-9]{1,6}`, 0, false},
		{`^[0-9]{1,6}`, 0, false},
	} {
		n, ok, err := patternMax(c.pattern)
		if err != nil || n != c.n || ok != c.ok {
			t.Errorf("%s: %d, %v, %v; want %d, %v", c.pattern, n, ok, err, c.n, c.ok)
		}
	}
}

// TestEveryAnswerIsBounded: the contract bounds every string and array of
// every success answer, and the rendered table names them.
func TestEveryAnswerIsBounded(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	ops, err := operations(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 8 {
		t.Fatalf("%d operations with a JSON answer, want 8", len(ops))
	}
	src, err := render(ops)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{path: "/name", min: 1, max: 200}`, `{path: "/transactions", items: true, max: 1000}`, `{path: "/supplier_id", max: 32, from: "pattern"}`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the table lacks %s:\n%s", want, src)
		}
	}
}
