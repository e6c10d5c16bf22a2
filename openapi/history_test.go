package openapi

import (
	"regexp"
	"strconv"
	"testing"
)

// TestHistoryDaysMatchesContract pins HistoryDays to the contract's
// listPOSTransactions figure.
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
