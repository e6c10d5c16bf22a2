package openapi

import (
	"regexp"
	"strconv"
	"testing"
)

// TestHistoryDaysMatchesContract pins the history limit the toolkit shares
// (the mock's history, the risk check's lookback cap and the start of its
// window) to the figure the contract documents for listPOSTransactions.
func TestHistoryDaysMatchesContract(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Find("/v1/stores/{store_id}/pos").Get
	m := regexp.MustCompile(`History is kept for\s+(\d+)\s+days`).FindStringSubmatch(op.Description)
	if m == nil {
		t.Fatalf("listPOSTransactions no longer says how long history is kept:\n%s", op.Description)
	}
	if n, _ := strconv.Atoi(m[1]); n != HistoryDays {
		t.Fatalf("the contract keeps %d days of history, HistoryDays is %d", n, HistoryDays)
	}
}
