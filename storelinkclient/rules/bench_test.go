package rules_test

import (
	"fmt"
	"testing"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// BenchmarkCheckPOSPage checks a POS page of 1000 transactions as the
// adapter does, with next_cursor absent.
func BenchmarkCheckPOSPage(b *testing.B) {
	now := time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)
	page := sl.POSPage{StoreID: "47", SKU: "8847291", Since: now.Add(-24 * time.Hour), TotalCount: 1000}
	for i := range 1000 {
		page.Transactions = append(page.Transactions, sl.POSTransaction{Timestamp: now.Add(-time.Duration(i+1) * time.Minute),
			TransactionID: fmt.Sprintf("T-47-20261113-%06d", i), Units: 2})
	}
	q := rules.Query{StoreID: "47", SKU: "8847291", Since: page.Since, Limit: 1000, Now: now,
		Absent: sl.NewAbsent("/next_cursor")}
	b.ReportAllocs()
	for b.Loop() {
		if fs := rules.CheckPOSPage(&page, q); len(fs) != 0 {
			b.Fatalf("findings on a whole page: %v", fs)
		}
	}
}
