package mockstorelink_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/storelinkclient"
)

// TestHistoryDaysMatchesContract pins the one history limit the toolkit
// shares (storelinkclient.HistoryDays: the mock's history, the risk check's
// lookback cap and the start of its window) to the figure the contract
// documents for listPOSTransactions.
func TestHistoryDaysMatchesContract(t *testing.T) {
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Find("/v1/stores/{store_id}/pos").Get
	m := regexp.MustCompile(`History is kept for\s+(\d+)\s+days`).FindStringSubmatch(op.Description)
	if m == nil {
		t.Fatalf("listPOSTransactions no longer says how long history is kept:\n%s", op.Description)
	}
	if n, _ := strconv.Atoi(m[1]); n != storelinkclient.HistoryDays {
		t.Fatalf("the contract keeps %d days of history, storelinkclient.HistoryDays is %d", n, storelinkclient.HistoryDays)
	}
}
