package bench

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// distance is the round trip the mock's latency fault puts on every route.
const distance = 50 * time.Millisecond

// BenchmarkRiskCheckAtDistance is korral_check_stock_risk through the
// assembled program with 50 ms on every route of the mock StoreLink (the
// world at the brief's scale: 180 stores, 18,000 SKUs), for 1, 6 and 20
// named stores and the chain sweep (store_ids ["all"]), with master data cold
// (MASTER_DATA_TTL=0: every check reads the store, SKU and supplier again)
// and warm (reused). It reports round_trips, the wall of one call divided
// by the injected latency: the critical path in StoreLink round trips
// (issue 35: at most 2.3 cold, 1.3 warm; the sweep under 2 s cold and 1 s
// warm, so at most 40 and 20; busy_sku is one store's 7,000-sale history,
// whose pages are sequential), and round_trips_over_floor, the
// same less the wall of the same call with no latency injected, measured
// in the same run (floor_ms): on a loaded machine the local work of six
// projections is not StoreLink's round trips.
func BenchmarkRiskCheckAtDistance(b *testing.B) {
	for _, master := range []string{"cold", "warm"} {
		for _, n := range []int{1, 6, 20, 0, -1} {
			name := "stores=" + itoa(max(n, 0))
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
				// The floor: the same calls with StoreLink next door, in
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

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + itoa(n%10)
}

// atDistance runs the program against a mock StoreLink 50 ms away that
// holds a key for every store of its world, and returns the session and
// the stores.
func atDistance(b *testing.B, cold bool) (*mcp.ClientSession, []string, func(time.Duration)) {
	b.Helper()
	dir := b.TempDir()
	env := map[string]string{
		"STATE_DB_PATH":      filepath.Join(dir, "state.db"),
		"STORELINK_MOCK_NOW": mockstorelink.DefaultNow().Format(time.RFC3339),
		"HOME":               dir,
	}
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
	toServer, serverIn := io.Pipe()
	serverOut, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, nil, cli.Env{Getenv: func(k string) string { return env[k] },
			Stdin: toServer, Stdout: fromServer, Stderr: io.Discard, Embedded: embedded})
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: serverOut, Writer: serverIn}, nil)
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cs.Close()
		_ = serverIn.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			b.Errorf("server: %v", err)
		}
	})
	setDelay := func(d time.Duration) {
		if d == 0 {
			mock.SetFaults()
			return
		}
		mock.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, Delay: d})
	}
	return cs, stores, setDelay
}
