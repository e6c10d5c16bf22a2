package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

// checkedBudget is the allocation budget of what the adapter does with a
// POS page of 1,000 lines once it has arrived (issue 44): the generated
// parse (reading the body, the typed decode), then checked (the misread
// guard, the contract's limits). 11,099 allocations when the guard
// decoded the body a second time into a generic document; 1,049 with the
// scanner: the parse 1,044 (one string per line, the body and the slice
// of lines growing), the guard none, the limits 4; 25 since the typed
// decode and the guard share one walk (storelinkclient's decode.go): the
// body, one string copy of it that every decoded string is part of, the
// slice of lines growing, the limits; 12 since the slice of lines is
// sized once from a count of its items and the limits' path is made once;
// 11 since an answer without an error makes no variable for errors.As.
// A change that makes the read heavier fails here, with no timing; lower
// the budget when one makes it lighter.
//
// Under the race detector sync.Pool drops a random share of what is put
// back (the guard's scanner), so the count is not deterministic there: the
// budget is checked without it (make ci's test-isolated).
const checkedBudget = 12

// TestCheckingAPOSPageAllocates: parsing and checking a page of 1,000
// lines stays within checkedBudget.
func TestCheckingAPOSPageAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	read := checkPOSPage(t, 1000)
	got := testing.AllocsPerRun(20, read)
	t.Logf("parsing and checking a 1,000-line page: %.0f allocations", got)
	if got > checkedBudget {
		t.Errorf("parsing and checking a 1,000-line page: %.0f allocations, budget %d", got, checkedBudget)
	}
}

// BenchmarkCheckedPOSPage is the adapter's work on the largest answer
// once it has arrived: the parse, the typed decode, the guard and the
// limits (docs/benchmarks.md).
func BenchmarkCheckedPOSPage(b *testing.B) {
	read := checkPOSPage(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}

// BenchmarkCheckedPOSPage93 is BenchmarkCheckedPOSPage for the page of the
// warm risk check (butter at store 47): 93 lines.
func BenchmarkCheckedPOSPage93(b *testing.B) {
	read := checkPOSPage(b, 93)
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}

// checkPOSPage returns a read of a whole page of n lines as the POS
// endpoint does it, after the transport.
func checkPOSPage(t testing.TB, n int) func() {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	body := []byte(posBody(since, slicesRepeat("T-47-20261128", n), "c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw"))
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", Keys: keys47()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	header := http.Header{"Content-Type": {"application/json"}}
	return func() {
		resp, err := sl.ParseListPOSTransactionsResponse(&http.Response{StatusCode: 200, Header: header,
			Body: io.NopCloser(bytes.NewReader(body))})
		var absent sl.Absent
		var unknown domain.Unknown
		v, err := checked(ctx, c, "GET", "/v1/stores/{store_id}/pos", "47", resp, err, &absent, &unknown)
		if err != nil || len(v.Transactions) != n || absent.Len() != 0 || len(unknown) != 0 {
			t.Fatalf("%v: %d lines, %d absent, unknown %v", err, len(v.Transactions), absent.Len(), unknown)
		}
	}
}
