package contract

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// unifiedDiff is the unified diff from a to b (lines with their endings)
// with 3 lines of context, naming both sides by path under a/ and b/.
func unifiedDiff(a, b []string, path string) string {
	ops := diffLines(a, b)
	if !slices.ContainsFunc(ops, func(o diffOp) bool { return o.kind != ' ' }) {
		return ""
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		stop := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				stop = j + 1
				continue
			}
			if j-stop >= 2*context {
				break
			}
		}
		stop = min(stop+context, len(ops))
		aStart, bStart := ops[start].a, ops[start].b
		aLen, bLen := 0, 0
		for _, o := range ops[start:stop] {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:stop] {
			line := o.line
			out.WriteByte(o.kind)
			out.WriteString(line)
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffOp is one line of a diff: kind ' ', '-' or '+', and the line's index
// in a and b before it (0-based).
type diffOp struct {
	kind byte
	a, b int
	line string
}

// diffLines is a shortest edit script from a to b by the longest common
// subsequence, after their common head and tail.
func diffLines(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	n, m := len(ma), len(mb)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	for k := 0; k < head; k++ {
		ops = append(ops, diffOp{' ', k, k, a[k]})
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ma[i] == mb[j]:
			ops = append(ops, diffOp{' ', head + i, head + j, ma[i]})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', head + i, head + j, ma[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', head + i, head + j, mb[j]})
			j++
		}
	}
	for k := 0; k < tail; k++ {
		ops = append(ops, diffOp{' ', len(a) - tail + k, len(b) - tail + k, a[len(a)-tail+k]})
	}
	return ops
}
