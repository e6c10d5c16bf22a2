package contract

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	a := splitLines([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"))
	b := splitLines([]byte("0\n1\n2\n3\n4\n5\n6\nseven\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"))
	got := unifiedDiff(a, b, "x")
	// Changes 6 lines apart or closer share a hunk.
	want := "--- a/x\n+++ b/x\n@@ -1,10 +1,11 @@\n+0\n 1\n 2\n 3\n 4\n 5\n 6\n-7\n+seven\n 8\n 9\n 10\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	// Further apart, they do not.
	c := splitLines([]byte("0\n1\n2\n3\n4\n5\n6\n7\neight\n9\n10\n11\n"))
	want = "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+0\n@@ -5,7 +6,7 @@\n 5\n 6\n 7\n-8\n+eight\n 9\n 10\n 11\n"
	if got := unifiedDiff(a[:11], c[:9+3], "x"); got != strings.Replace(want, "@@ -0,0 +1 @@\n+0\n", "@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n", 1) {
		t.Fatalf("diff:\n%s", got)
	}
	if unifiedDiff(a, a, "x") != "" {
		t.Fatal("a diff of equal texts")
	}
}
