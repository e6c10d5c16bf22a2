package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The chain sweep (ADR 0027) and the StoreLink budget (ADR 0024) at 180
// stores and 18,000 SKUs, through a counting proxy and the TypeScript client.

// flightProxy delays each request to the mock so open requests pile up, and
// records each start with the number in flight.
type flightProxy struct {
	next  http.Handler
	delay time.Duration

	mu       sync.Mutex
	inFlight int
	starts   []proxyStart
	ends     []proxyEnd
}

type proxyStart struct {
	route    string // "inventory 1007", "pos 1007", "store 1007", "sku 8847291", "supplier SUP-G0001", or the path
	query    string
	inFlight int // including this one
}

type proxyEnd struct {
	start  int // index into starts
	status int
}

func (p *flightProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.inFlight++
	i := len(p.starts)
	p.starts = append(p.starts, proxyStart{route: routeOf(r.URL.Path), query: r.URL.RawQuery, inFlight: p.inFlight})
	p.mu.Unlock()
	time.Sleep(p.delay)
	rec := httptest.NewRecorder()
	p.next.ServeHTTP(rec, r)
	p.mu.Lock()
	p.inFlight--
	p.ends = append(p.ends, proxyEnd{start: i, status: rec.Code})
	p.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// routeOf names a StoreLink path by its kind and subject.
func routeOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	switch {
	case len(parts) == 3 && parts[0] == "stores":
		return parts[2] + " " + parts[1]
	case len(parts) == 2 && parts[0] == "stores":
		return "store " + parts[1]
	case len(parts) == 2 && parts[0] == "skus":
		return "sku " + parts[1]
	case len(parts) == 2 && parts[0] == "suppliers":
		return "supplier " + parts[1]
	}
	return path
}

// take returns what the proxy saw since the last take, and forgets it.
func (p *flightProxy) take() ([]proxyStart, []proxyEnd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, e := p.starts, p.ends
	p.starts, p.ends = nil, nil
	return s, e
}

func countRoutes(starts []proxyStart) map[string]int {
	n := map[string]int{}
	for _, s := range starts {
		n[s.route]++
	}
	return n
}

// sweepWorld is the 180-store world behind a counting proxy.
func sweepWorld(t *testing.T, delay time.Duration) (*e2etest.World, *flightProxy, []string, []string) {
	t.Helper()
	w := e2etest.NewWorld(t, e2etest.WithScale(180, 18000))
	p := &flightProxy{next: w.Mock.Server, delay: delay}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	var stores []string
	for id := range w.Mock.Server.DefaultKeyring() {
		stores = append(stores, id)
	}
	if len(stores) != 180 {
		t.Fatalf("the large world's keyring holds %d stores, want 180", len(stores))
	}
	env := w.Env()
	env[0] = "UPSTREAM_BASE_URL=" + srv.URL
	return w, p, stores, env
}

// TestChainSweepReadsEachStoreOnce: a cold sweep of 180 stores reads each
// store's data once and the SKU and supplier once; a warm one rereads only
// inventory and POS. Every store is accounted for and the answer fits its budget.
func TestChainSweepReadsEachStoreOnce(t *testing.T) {
	inst := findTSClient(t)
	_, proxy, stores, env := sweepWorld(t, time.Millisecond)
	h := startTSHost(t, inst, &journal{statuses: map[string]bool{}}, "sweep", env)
	proxy.take() // whatever start-up asked
	sweep := map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"all"}}

	for _, round := range []struct {
		name   string
		master int // requests for each store record, the SKU and the supplier
	}{{"cold", 1}, {"warm", 0}} {
		env := h.call("sweep "+round.name, "korral_check_stock_risk", sweep, "ok")
		if env == nil {
			t.Fatalf("%s: no answer", round.name)
		}
		starts, _ := proxy.take()
		// A sales window with no sale rereads POS further back; which stores
		// do depends on the time of day.
		n := countRoutes(firstPOSOnly(starts))
		for _, id := range stores {
			if n["inventory "+id] != 1 || n["pos "+id] != 1 || n["store "+id] != round.master {
				t.Fatalf("%s: store %s: %d inventory, %d POS, %d store requests; want 1, 1, %d",
					round.name, id, n["inventory "+id], n["pos "+id], n["store "+id], round.master)
			}
			delete(n, "inventory "+id)
			delete(n, "pos "+id)
			delete(n, "store "+id)
		}
		if n["sku "+mockstorelink.SKUButter] != round.master {
			t.Fatalf("%s: %d SKU requests, want %d", round.name, n["sku "+mockstorelink.SKUButter], round.master)
		}
		delete(n, "sku "+mockstorelink.SKUButter)
		supplier := 0
		for route, c := range n {
			if strings.HasPrefix(route, "supplier ") {
				supplier += c
				delete(n, route)
			}
		}
		if supplier != round.master || len(n) != 0 {
			t.Fatalf("%s: %d supplier requests (want %d), and others: %v", round.name, supplier, round.master, n)
		}

		d := data(t, env)
		sw := d["sweep"].(map[string]any)
		o := sw["outcomes"].(map[string]any)
		if sw["stores_checked"] != 180.0 || num(o["stockout_before_close"])+num(o["cannot_tell"])+num(o["no_stockout"])+num(o["flagged_data"])+num(o["not_checked"]) != 180 || o["not_checked"] != 0.0 {
			t.Fatalf("%s: sweep %v", round.name, sw)
		}
		detailed := d["stores"].([]any)
		atRisk := int(num(o["stockout_before_close"]) + num(o["cannot_tell"]))
		rows := sw["more_at_risk"].(map[string]any)["rows"].([]any)
		if len(detailed) != min(atRisk, 5) || len(rows) != min(atRisk-len(detailed), 25) || int(num(sw["at_risk_not_listed"])) != atRisk-len(detailed)-len(rows) {
			t.Fatalf("%s: %d at risk, %d detailed, %d rows, %v not listed", round.name, atRisk, len(detailed), len(rows), sw["at_risk_not_listed"])
		}
		// The mock's world follows the real clock: late in the trading day
		// the butter lasts to the close everywhere, and no store is at risk.
		if atRisk > 0 {
			first := detailed[0].(map[string]any)["risk"].(map[string]any)
			if first["will_stockout_before_close_today"] == "false" {
				t.Fatalf("%s: the first detailed store does not run out: %v", round.name, first)
			}
		}
		// The answer's budget is independent of the chain's size.
		text := envelopeText(t, env)
		t.Logf("%s: %d at risk, answer %d bytes", round.name, atRisk, len(text))
		if len(text) > sweepAnswerBudget {
			t.Errorf("%s: the sweep's answer is %d bytes, budget %d", round.name, len(text), sweepAnswerBudget)
		}
	}
}

// sweepAnswerBudget is the most bytes a sweep's text content may take: 5
// detailed stores (about 1.6 KB each), 25 rows, the product and the counts.
const sweepAnswerBudget = 12000

// TestBudgetShrinksOnThrottlingAndTakesCallsInTurns: 429s halve the
// in-flight budget, which grows back as answers come, and a one-store check
// sent during a sweep is served among the sweep's requests.
func TestBudgetShrinksOnThrottlingAndTakesCallsInTurns(t *testing.T) {
	inst := findTSClient(t)
	w, proxy, _, env := sweepWorld(t, 20*time.Millisecond)
	env = append(env, "UPSTREAM_MAX_IN_FLIGHT=16")
	h := startTSHost(t, inst, &journal{statuses: map[string]bool{}}, "budget", env)
	sweep := map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"all"}}

	// A first sweep warms the master data and shows the full budget.
	h.call("sweep", "korral_check_stock_risk", sweep, "ok")
	starts, _ := proxy.take()
	if peak := peakOf(starts); peak != 16 {
		t.Fatalf("the first sweep kept %d requests open at once, want the budget's 16", peak)
	}

	// StoreLink throttles: the next two requests are answered 429.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, RetryAfter: 1, Count: 2})
	other := mockstorelink.SKUAt(12)
	h.call("throttled check", "korral_check_stock_risk", map[string]any{"sku": other, "store_id": "47"}, "RATE_LIMITED")
	_, ends := proxy.take()
	if throttled := slices.IndexFunc(ends, func(e proxyEnd) bool { return e.status == http.StatusTooManyRequests }); throttled < 0 {
		t.Fatalf("no 429 reached the server: %v", ends)
	}
	w.Mock.Server.SetFaults()

	// The sweep, and a one-store check sent while its requests queue.
	wait := h.send("sweep after 429", "korral_check_stock_risk", sweep, "ok")
	for {
		proxy.mu.Lock()
		n := len(proxy.starts)
		proxy.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	single := h.send("one store meanwhile", "korral_check_stock_risk", map[string]any{"sku": other, "store_id": "102"}, "ok")
	if single() == nil || wait() == nil {
		t.Fatal("a call did not complete")
	}
	starts, _ = proxy.take()
	sweepStarts := slices.DeleteFunc(firstPOSOnly(starts), func(s proxyStart) bool { return !strings.Contains(s.query, mockstorelink.SKUButter) })
	if len(sweepStarts) != 360 {
		t.Fatalf("the warm sweep sent %d requests, want 360 (inventory and POS of 180 stores)", len(sweepStarts))
	}
	if others := slices.DeleteFunc(slices.Clone(starts), func(s proxyStart) bool { return strings.Contains(s.query, mockstorelink.SKUButter) }); len(others) > 6 {
		t.Fatalf("the one-store check sent %d requests, want at most 6 (its stock, POS (twice when the window opens without a sale), SKU, supplier): %v", len(others), others)
	}
	t.Logf("open at once: %d among the first 24 after the 429s, %d over the last 100; the one-store check's first request was request %d of %d",
		peakOf(starts[:24]), peakOf(starts[len(starts)-100:]), slices.IndexFunc(starts, func(s proxyStart) bool { return strings.Contains(s.query, other) }), len(starts))
	// Halved to 8 and growing by one per window, the first 24 requests
	// after the 429s never found more than 10 open.
	if early := peakOf(starts[:24]); early > 10 {
		t.Fatalf("after the 429s, %d requests were open at once among the first 24, want at most 10 (16 halved, grown by at most 2)", early)
	}
	// Recovered: by the end of the sweep the budget is whole again.
	if late := peakOf(starts[len(starts)-100:]); late <= 8 {
		t.Fatalf("the budget did not grow back: at most %d open at once over the sweep's last 100 requests", late)
	}
	// The single check started in the first half of the sweep's requests,
	// not after the queue of 360.
	firstOther := slices.IndexFunc(starts, func(s proxyStart) bool { return strings.Contains(s.query, other) })
	if firstOther < 0 || firstOther > 180 {
		t.Fatalf("the one-store check's first request was request %d of %d: it waited behind the sweep", firstOther, len(starts))
	}
	// The log says so too: a decrease for the 429s, increases after.
	logs := h.stderr.String()
	if !strings.Contains(logs, `"msg":"upstream.budget"`) || !strings.Contains(logs, `"reason":"throttled"`) {
		t.Fatalf("no upstream.budget decrease in the log:\n%s", tail(logs, 3000))
	}
}

// peakOf is the most requests in flight at any of these starts.
func peakOf(starts []proxyStart) int {
	peak := 0
	for _, s := range starts {
		peak = max(peak, s.inFlight)
	}
	return peak
}

// envelopeText is the envelope as the model reads it.
func envelopeText(t *testing.T, env map[string]any) string {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstPOSOnly drops the second POS read of a store and SKU; a third read stays.
func firstPOSOnly(starts []proxyStart) []proxyStart {
	seen := map[string]int{}
	out := make([]proxyStart, 0, len(starts))
	for _, s := range starts {
		if strings.HasPrefix(s.route, "pos ") && strings.Contains(s.query, "sku=") {
			k := s.query[strings.Index(s.query, "sku="):]
			if i := strings.IndexByte(k, '&'); i >= 0 {
				k = k[:i]
			}
			k = s.route + " " + k
			if seen[k]++; seen[k] == 2 {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}
