package bench

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// distance is the round trip the mock's latency fault puts on every route.
const distance = 50 * time.Millisecond

// BenchmarkRiskCheckAtDistance runs korral_check_stock_risk against a large
// mock with 50 ms latency, cold and warm, and reports round_trips and
// round_trips_over_floor.
func BenchmarkRiskCheckAtDistance(b *testing.B) {
	for _, master := range []string{"cold", "warm"} {
		for _, n := range []int{1, 6, 20, 0, -1} {
			name := "stores=" + strconv.Itoa(max(n, 0))
			switch n {
			case 0:
				name = "sweep"
			case -1:
				name = "busy_sku"
			}
			b.Run(master+"/"+name, func(b *testing.B) {
				cs, stores, setDelay := atDistance(b, master == "cold")
				if n > len(stores) {
					b.Skipf("the mock's world has %d stores", len(stores))
				}
				args := map[string]any{"sku": mockstorelink.SKUButter, "store_ids": stores[:max(n, 0)]}
				switch n {
				case 0:
					args["store_ids"] = []string{"all"}
				case -1:
					// A SKU of about 450 sales a day: 14 days are ~7,000
					// transactions, 7 POS pages read one after the other
					// (each needs the cursor of the one before).
					args = map[string]any{"sku": mockstorelink.SKUAt(1000), "store_ids": stores[:1]}
				}
				params := &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: args}
				ctx := context.Background()
				call := func() {
					if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
						b.Fatalf("call: %v %+v", err, res)
					}
				}
				// The floor: the same calls with no latency injected, in
				// the same run, so that what the machine's load adds to
				// every call is not counted as round trips.
				setDelay(0)
				call()
				const floorCalls = 10
				start := time.Now()
				for range floorCalls {
					call()
				}
				floor := time.Since(start) / floorCalls
				setDelay(distance)
				call()
				b.ResetTimer()
				for b.Loop() {
					call()
				}
				wall := b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(float64(wall)/float64(distance), "round_trips")
				b.ReportMetric(float64(wall-floor)/float64(distance), "round_trips_over_floor")
				b.ReportMetric(float64(floor)/1e6, "floor_ms")
			})
		}
	}
}

// atDistance runs the program against a mock StoreLink 50 ms away that
// holds a key for every store of its world, and returns the session and
// the stores.
func atDistance(b *testing.B, cold bool) (*mcp.ClientSession, []string, func(time.Duration)) {
	b.Helper()
	env := map[string]string{}
	if cold {
		env["MASTER_DATA_TTL"] = "0"
	}
	var stores []string
	var mock *mockstorelink.Server
	embedded := func(_ context.Context, fixedNow time.Time) (*cli.EmbeddedUpstream, error) {
		r, err := mockstorelink.Start(mockstorelink.Options{NoResponseValidation: true, MaxRequestLog: -1,
			Stores: 180, SKUs: 18000, Now: func() time.Time { return fixedNow }})
		if err != nil {
			return nil, err
		}
		r.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, Delay: distance})
		mock = r.Server
		keys := r.Server.Keys()
		for id := range keys {
			stores = append(stores, id)
		}
		slices.Sort(stores)
		return &cli.EmbeddedUpstream{BaseURL: r.URL, Keyring: keys, Close: r.Close}, nil
	}
	p := startProgram(b, b.TempDir(), env, embedded)
	b.Cleanup(func() { p.stop(b) })
	setDelay := func(d time.Duration) {
		if d == 0 {
			mock.SetFaults()
			return
		}
		mock.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, Delay: d})
	}
	return p.session, stores, setDelay
}
