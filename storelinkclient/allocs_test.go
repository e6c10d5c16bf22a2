package storelinkclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// Allocation budgets of reading a POS page of 1,000 lines, the largest
// answer StoreLink sends (issue 44). A change that makes the read heavier
// fails here, with no timing. Each budget is a little above what the read
// takes; lower it when a change makes the read lighter.
//
//   - guardBudget: the misread guard alone (BodyFields: missing, unknown
//     and renamed properties, absent fields). 10,052 allocations when it
//     decoded the body into a generic document and walked it by
//     reflection; 5 with the scanner, all for the one absent property
//     (next_cursor): its pointer and the set that holds it.
//   - readBudget: what the adapter does with an answer, the generated
//     parse (reading the body, the typed decode) and ResultWithFields (the
//     guard). 11,094 before the scanner; 1,047 with it (one string per
//     line, the body and the slice of lines growing); 24 since the typed
//     decode and the guard share one walk (decode.go): the body, one copy
//     of it as a string that every decoded string is part of, the slice
//     of lines growing, the guard's absent set, the result; 14 since the
//     slice of lines is sized once from a count of its items.
//
// Under the race detector sync.Pool drops a random share of what is put
// back, so the guard allocates its scanner again now and then and the
// count is not deterministic: the budgets are checked without it (make
// ci's test-isolated).
const (
	guardBudget = 8
	readBudget  = 17
)

// posPageBody is a page of n lines as StoreLink sends it, with offsets in
// its times and no next_cursor (the last page).
func posPageBody(t testing.TB, n int) []byte {
	since := time.Date(2026, 11, 13, 0, 0, 0, 0, time.FixedZone("", 3600))
	page := sl.POSPage{StoreID: "47", SKU: "8847291", Since: since, TotalCount: int64(n)}
	for i := range n {
		page.Transactions = append(page.Transactions, sl.POSTransaction{Timestamp: since.Add(time.Duration(i) * time.Minute),
			TransactionID: fmt.Sprintf("T-47-20261113-%06d", i), Units: 2})
	}
	body, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestGuardingAPOSPageAllocates: the guard of a whole page of 1,000 lines
// stays within guardBudget.
func TestGuardingAPOSPageAllocates(t *testing.T) {
	skipUnderRace(t)
	body := posPageBody(t, 1000)
	got := testing.AllocsPerRun(50, func() {
		if f := sl.BodyFields(body, &sl.POSPage{}); len(f.Problems) != 0 || f.Absent.Len() != 1 {
			t.Fatalf("%v, %d absent: want no problem, next_cursor absent", f.Problems, f.Absent.Len())
		}
	})
	t.Logf("guarding a 1,000-line page: %.0f allocations", got)
	if got > guardBudget {
		t.Errorf("guarding a 1,000-line page: %.0f allocations, budget %d", got, guardBudget)
	}
}

// TestReadingAPOSPageAllocates: parsing a page of 1,000 lines, its typed
// decode and its guard stay within readBudget.
func TestReadingAPOSPageAllocates(t *testing.T) {
	skipUnderRace(t)
	body := posPageBody(t, 1000)
	header := http.Header{"Content-Type": {"application/json"}}
	got := testing.AllocsPerRun(20, func() {
		resp, err := sl.ParseListPOSTransactionsResponse(&http.Response{StatusCode: 200, Header: header,
			Body: io.NopCloser(bytes.NewReader(body))})
		v, f, err := sl.ResultWithFields(resp, err)
		if err != nil || len(v.Transactions) != 1000 || len(f.Problems) != 0 {
			t.Fatalf("%v, %v", f.Problems, err)
		}
	})
	t.Logf("reading a 1,000-line page: %.0f allocations", got)
	if got > readBudget {
		t.Errorf("reading a 1,000-line page: %.0f allocations, budget %d", got, readBudget)
	}
}

// skipUnderRace skips an allocation budget under the race detector.
func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
}
