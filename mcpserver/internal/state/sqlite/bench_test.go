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

// BenchmarkRecordAudit is the durable part of every tool call: its audit
// record, stored before the answer goes back. "table" commits one INSERT
// per record (RecordAudit; in parallel the records of callers that finish
// together are committed in one transaction, state.AuditGroup). "spool"
// writes one line to the process's spool (SpoolAudit, ADR 0044); the
// mover's inserts run beside it, and the timed part ends with Close, which
// moves what is left, so ns/op holds every record's move. Compare CPU with
// /usr/bin/time over a fixed -benchtime Nx: the mover runs on another core.
func BenchmarkRecordAudit(b *testing.B) {
	for _, way := range []string{"table", "spool"} {
		for _, par := range []bool{false, true} {
			name := way + "/sequential"
			if par {
				name = way + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				db, err := Open(filepath.Join(b.TempDir(), "state.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = db.Close() })
				ctx := context.Background()
				store := db.RecordAudit
				if way == "spool" {
					store = db.SpoolAudit
				}
				var n atomic.Int64
				record := func() error {
					i := n.Add(1)
					r := state.AuditRecord{
						Time: time.Now(), CallID: fmt.Sprintf("c-%d", i), Client: "bench-agent", Session: "proc-bench",
						Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK,
						Summary:    "Checked stock risk of Madeta butter 250g (SKU 8847291) at store 47: on hand 5, stockout before close today: likely, confidence medium.",
						DurationMS: 1.7,
					}
					return store(ctx, r)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if par {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := record(); err != nil {
								b.Error(err) // Fatal may not be called off the benchmark's goroutine
								return
							}
						}
					})
				} else {
					for range b.N {
						if err := record(); err != nil {
							b.Fatal(err)
						}
					}
				}
				// Every record in the table before the clock stops.
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
