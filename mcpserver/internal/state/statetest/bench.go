package statetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Bench measures the durable work of the write path and of every tool call
// on the store open returns: a ledger reservation with its verdict
// (Reserve then Finish, two transactions, as one confirmed order costs) and
// one audit insert, one caller at a time and eight per CPU at once; the audit
// insert also from 50 callers at once (RecordAudit/writers-50), as a replica
// serving 50 HTTP clients sees it. Besides ns/op it
// reports the median and 99th percentile of single operations (p50-µs,
// p99-µs), since a replica's callers feel the tail.
func Bench(b *testing.B, open func(b *testing.B) state.Store) {
	ctx := context.Background()
	for _, par := range []bool{false, true} {
		mode := "sequential"
		if par {
			mode = "parallel"
		}
		b.Run("ReserveFinish/"+mode, func(b *testing.B) {
			s := open(b)
			var n atomic.Int64
			measure(b, par, func() error {
				i := n.Add(1)
				e := sending(fmt.Sprintf("bench-%d", i), fmt.Sprintf("sku-%d", i))
				if _, _, err := s.Reserve(ctx, e); err != nil {
					return err
				}
				_, err := s.Finish(ctx, e.IdempotencyKey, state.StateRaised, fmt.Sprintf("ORD-%d", i), "", "", base)
				return err
			})
		})
		b.Run("RecordAudit/"+mode, func(b *testing.B) {
			s := open(b)
			var n atomic.Int64
			measure(b, par, func() error {
				return s.RecordAudit(ctx, state.AuditRecord{
					Time: time.Now(), CallID: fmt.Sprintf("c-%d", n.Add(1)), Client: "bench-agent", Session: "proc-bench",
					Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK,
					Summary:    "Checked stock risk of Madeta butter 250g (SKU 8847291) at store 47: on hand 5, stockout before close today: likely, confidence medium.",
					DurationMS: 1.7,
				})
			})
		})
	}
	b.Run("RecordAudit/writers-50", func(b *testing.B) {
		s := open(b)
		var n atomic.Int64
		measureWriters(b, 50, func() error {
			return s.RecordAudit(ctx, state.AuditRecord{
				Time: time.Now(), CallID: fmt.Sprintf("c-%d", n.Add(1)), Client: "bench-agent", Session: "proc-bench",
				Tool: "korral_check_stock_risk", StoreID: "47", SKU: "8847291", Outcome: state.OutcomeOK,
				Summary:    "Checked stock risk of Madeta butter 250g (SKU 8847291) at store 47: on hand 5, stockout before close today: likely, confidence medium.",
				DurationMS: 1.7,
			})
		})
	})
}

// measureWriters runs op b.N times from exactly writers goroutines at once
// (RunParallel's count is a multiple of GOMAXPROCS) and reports the latency
// percentiles of the single operations and the operations per second.
func measureWriters(b *testing.B, writers int, op func() error) {
	var mu sync.Mutex
	var lat []time.Duration
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				start := time.Now()
				err := op()
				mine = append(mine, time.Since(start))
				if err != nil {
					b.Error(err)
					break
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	report(b, lat)
}

// measure runs op b.N times, in parallel when par, and reports the latency
// percentiles of the single operations.
func measure(b *testing.B, par bool, op func() error) {
	var mu sync.Mutex
	var lat []time.Duration
	timed := func() error {
		start := time.Now()
		err := op()
		d := time.Since(start)
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return err
	}
	b.ReportAllocs()
	b.ResetTimer()
	if par {
		// Eight callers per CPU, as a replica serving many agents sees.
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := timed(); err != nil {
					b.Error(err) // Fatal may not be called off the benchmark's goroutine
					return
				}
			}
		})
	} else {
		for range b.N {
			if err := timed(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	report(b, lat)
}

// report adds the median and 99th percentile of lat, in µs, and the
// operations per second of the whole run.
func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	slices.Sort(lat)
	at := func(p int) float64 { return float64(lat[(p*len(lat)+99)/100-1]) / float64(time.Microsecond) }
	b.ReportMetric(at(50), "p50-µs")
	b.ReportMetric(at(99), "p99-µs")
}
