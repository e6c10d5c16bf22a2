package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRecordAudit is the durable part of every tool call: one INSERT
// into the audit trail, committed before the answer goes back. In parallel
// the records of callers that finish together are committed in one
// transaction (state.AuditGroup), so the figure per call shrinks with more
// callers.
func BenchmarkRecordAudit(b *testing.B) {
	for _, par := range []bool{false, true} {
		name := "sequential"
		if par {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			ctx := context.Background()
			var n atomic.Int64
			record := func() error {
				i := n.Add(1)
				r := state.AuditRecord{
					Time: time.Now(), CallID: fmt.Sprintf("c-%d", i), Client: "bench-agent", Session: "proc-bench",
					Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK,
					Summary:    "Checked stock risk of Madeta butter 250g (SKU 8847291) at store 47: on hand 5, stockout before close today: likely, confidence medium.",
					DurationMS: 1.7,
				}
				return db.RecordAudit(ctx, r)
			}
			b.ReportAllocs()
			if par {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := record(); err != nil {
							b.Error(err) // Fatal may not be called off the benchmark's goroutine
							return
						}
					}
				})
				return
			}
			for b.Loop() {
				if err := record(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
