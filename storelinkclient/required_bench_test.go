package storelinkclient

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkFieldProblemsPOSPage is the walk every answer gets (issue 32:
// never read a renamed field as absent) on the largest answer StoreLink
// sends: a POS page of 1000 transactions.
func BenchmarkFieldProblemsPOSPage(b *testing.B) {
	page := POSPage{StoreID: "47", SKU: "8847291", Since: time.Date(2026, 11, 13, 0, 0, 0, 0, time.UTC), TotalCount: 1000}
	for i := range 1000 {
		page.Transactions = append(page.Transactions, POSTransaction{Timestamp: page.Since.Add(time.Duration(i) * time.Minute),
			TransactionID: fmt.Sprintf("T-47-20261113-%06d", i), Units: 2})
	}
	body, err := json.Marshal(page)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if p := FieldProblems(body, &page); len(p) != 0 {
			b.Fatalf("problems in a whole page: %v", p)
		}
	}
}
